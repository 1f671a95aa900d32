/**
 * `follow`, shared by both dialects: read the rows after a cursor, yield them, then sleep until a
 * notification says this session grew (or a `resync` says something may have been missed), and read again.
 *
 * Invariants:
 * - Rows are the truth (ARCHITECTURE "Storage", R1: resume is reading the log): a notification only wakes
 *   the loop; every yielded event comes from a read, in seq order, each exactly once.
 * - The subscription is taken before the first read, so an append that commits between a read and the
 *   next wait still wakes the loop.
 * - No busy loop: with nothing new the iterator awaits a promise that only a notification or the abort
 *   signal resolves. Aborting ends the iteration cleanly (no throw), and `return()` unsubscribes.
 */
import type { LogEvent } from "../log/events.js";
import type { FollowOptions, ReadOptions, StoreNotification, SubscribeOptions } from "./store.js";

export type FollowSource = {
  read(sessionId: string, options: ReadOptions): Promise<LogEvent[]>;
  subscribe(listener: (notification: StoreNotification) => void, options?: SubscribeOptions): () => void;
};

/** Rows fetched per read while catching up; a full page means "read again at once". */
const PAGE = 1000;

export async function* followEvents(
  source: FollowSource,
  sessionId: string,
  options: FollowOptions = {},
): AsyncGenerator<LogEvent> {
  const { signal } = options;
  let cursor = options.after ?? 0;
  let dirty = true;
  let wake: (() => void) | undefined;
  const poke = () => {
    dirty = true;
    const w = wake;
    wake = undefined;
    w?.();
  };
  const unsubscribe = source.subscribe(
    (n) => {
      if (n.channel === "resync" || (n.channel === "events" && n.sessionId === sessionId && n.seq > cursor))
        poke();
    },
    { events: true, sessionId },
  );
  signal?.addEventListener("abort", poke);
  try {
    while (!signal?.aborted) {
      if (!dirty) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      dirty = false;
      const events = await source.read(sessionId, { after: cursor, limit: PAGE });
      for (const event of events) {
        if (signal?.aborted) return;
        cursor = event.seq;
        yield event;
      }
      if (events.length === PAGE) dirty = true;
    }
  } finally {
    signal?.removeEventListener("abort", poke);
    unsubscribe();
  }
}
