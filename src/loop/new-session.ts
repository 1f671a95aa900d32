/**
 * A new main session: its row (the workspace in its metadata) and its first event, `session/start`. The
 * one way to begin a session, for `bdsh run` (openAgent) and `POST /v1/sessions` alike; forks begin from
 * their parent instead (fork.ts).
 */
import type { SessionRow, Store } from "../store/store.js";

export async function startSession(
  store: Store,
  options: { workspace: string; title?: string | undefined },
): Promise<SessionRow> {
  const session = await store.createSession({
    title: options.title ?? null,
    metadata: { workspace: options.workspace },
  });
  await store.append(
    session.id,
    [
      {
        type: "session/start",
        data: {
          kind: session.kind,
          cwd: options.workspace,
          ...(options.title ? { title: options.title } : {}),
        },
      },
    ],
    0,
  );
  return (await store.getSession(session.id)) ?? session;
}
