/**
 * A new session: its row (the workspace in its metadata) and its first event, `session/start`. The one
 * way to begin a session, for `bdsh run` (openAgent), `POST /v1/sessions` and a spawned subagent alike;
 * forks begin from their parent instead (fork.ts).
 */
import type { CreateSessionInput, SessionRow, Store } from "../store/store.js";

export async function startSession(
  store: Store,
  options: { workspace: string; title?: string | undefined },
): Promise<SessionRow> {
  return beginSession(
    store,
    { title: options.title ?? null, metadata: { workspace: options.workspace } },
    { cwd: options.workspace, title: options.title },
  );
}

/** Creates the session row and appends its `session/start`. */
export async function beginSession(
  store: Pick<Store, "createSession" | "append" | "getSession">,
  row: CreateSessionInput,
  start: { cwd: string; title?: string | undefined },
): Promise<SessionRow> {
  const session = await store.createSession(row);
  const { cwd, title } = start;
  await store.append(
    session.id,
    [{ type: "session/start", data: { kind: session.kind, cwd, ...(title ? { title } : {}) } }],
    0,
  );
  return (await store.getSession(session.id)) ?? session;
}
