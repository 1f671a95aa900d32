/**
 * S1 fork: a new session seeded with the parent's events up to its last `turn/end` (the in-flight turn is
 * not inherited), then a `session/end-seed` marker. Nothing else carries over: goal activation, file
 * observations and repeat chains live in the process and start fresh (R2).
 */
import type { NewEvent } from "../log/events.js";
import type { SessionDirectory, SessionRow } from "../store/store.js";
import { SessionNotFoundError } from "../store/store.js";

export type ForkOptions = {
  /** The child's title (default: the parent's, marked as a fork). */
  title?: string | null;
  /** Merged over the parent's metadata (S1: a delegated fork carries its `delegation` record). */
  metadata?: Record<string, unknown>;
};

export async function forkSession(
  store: SessionDirectory,
  parentId: string,
  options: ForkOptions = {},
): Promise<SessionRow> {
  const parent = await store.getSession(parentId);
  if (!parent) throw new SessionNotFoundError(parentId);
  const events = await store.read(parentId);
  let cut = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.type === "turn/end") {
      cut = i;
      break;
    }
  }
  if (cut < 0) cut = events.findIndex((e) => e.type === "turn/start") - 1;
  if (cut < 0 && !events.some((e) => e.type === "turn/start")) cut = events.length - 1;
  const seed = events.slice(0, cut + 1);
  const child = await store.createSession({
    parentId,
    kind: "fork",
    title: options.title !== undefined ? options.title : parent.title ? `${parent.title} (fork)` : null,
    metadata: { ...parent.metadata, forkedFrom: parentId, ...options.metadata },
  });
  const copied: NewEvent[] = seed.map(
    ({ type, data, turn, step, at }) => ({ type, data, turn, step, at }) as NewEvent,
  );
  copied.push({ type: "session/end-seed", data: { parentId, parentSeq: seed.at(-1)?.seq ?? 0 } });
  await store.append(child.id, copied, 0);
  return (await store.getSession(child.id)) ?? child;
}
