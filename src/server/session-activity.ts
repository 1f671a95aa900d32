/**
 * What a session is doing, for a person watching it (the dashboard's "needs you"): derived from the tail of
 * its log, which every server can read, so the answer is the same whichever server is asked.
 *
 * - `waiting`: the open turn waits on a person, for an approval (T16) or an answer to a question (T18):
 *   a request in the log with no answer after it (./interactions.ts `pendingInteractions`).
 * - `running`: a turn is open and waits on nobody.
 * - `errored` / `aborted`: no turn is open and the last one ended in an error, or was cancelled or cut off
 *   (`interrupted`: its server stopped mid-turn). `idle`: anything else.
 *
 * Only the last events are read: an agent that waits has just flushed its request (nothing else is written
 * while it waits, bar the other calls of the same step), and a turn's `turn/end` is among its last events.
 */
import type { LogEvent, TurnEndReason } from "../log/events.js";
import type { SessionRow, Store } from "../store/store.js";
import { pendingInteractions } from "./interactions.js";

export type SessionState = "running" | "waiting" | "idle" | "errored" | "aborted";
export type WaitingFor = "approval" | "question";
export type SessionActivity = {
  state: SessionState;
  /** What the session waits for (empty unless `waiting`). */
  waitingFor: WaitingFor[];
  /** How the last finished turn ended (`null`: none in the tail read). */
  lastTurn: TurnEndReason | null;
};

/** Events read from the end of a running session's log, and of an idle one's. */
const RUNNING_TAIL = 200;
const IDLE_TAIL = 16;

export function activityOf(running: boolean, tail: readonly LogEvent[]): SessionActivity {
  let lastTurn: TurnEndReason | null = null;
  for (const event of tail) if (event.type === "turn/end") lastTurn = event.data.reason;
  if (running) {
    const pending = pendingInteractions(tail);
    const waitingFor: WaitingFor[] = [];
    if (pending.approvals.length) waitingFor.push("approval");
    if (pending.questions.length) waitingFor.push("question");
    return { state: waitingFor.length ? "waiting" : "running", waitingFor, lastTurn };
  }
  const state: SessionState =
    lastTurn === "error"
      ? "errored"
      : lastTurn === "aborted" || lastTurn === "interrupted"
        ? "aborted"
        : "idle";
  return { state, waitingFor: [], lastTurn };
}

export async function sessionActivity(store: Store, row: SessionRow): Promise<SessionActivity> {
  const running = row.status === "running";
  const tail = running ? RUNNING_TAIL : IDLE_TAIL;
  const events = row.lastSeq > 0 ? await store.read(row.id, { after: Math.max(0, row.lastSeq - tail) }) : [];
  return activityOf(running, events);
}
