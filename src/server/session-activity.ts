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
 * What is read: for a running session, the open turn's interaction events (requests, answers, the turn's
 * bounds), found by reading back from the end in windows until the turn's start, however many parallel calls
 * and results the turn holds; for an idle one, its last events (a turn's `turn/end` is among its last).
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

/** Events read from the end of an idle session's log. */
const IDLE_TAIL = 16;
/** How many seqs one backward read of a running session's log spans. */
const RUNNING_WINDOW = 1_000;
const INTERACTION_TYPES = [
  "turn/start",
  "turn/end",
  "approval/requested",
  "approval/answered",
  "question/asked",
  "question/answered",
] as const;

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

/** The open turn's interaction events: windows read back from the end until one holds the turn's start. */
async function openTurnInteractions(store: Store, row: SessionRow): Promise<LogEvent[]> {
  const windows: LogEvent[][] = [];
  for (let upTo = row.lastSeq; upTo > 0; ) {
    const after = Math.max(0, upTo - RUNNING_WINDOW);
    const window = await store.read(row.id, { after, upTo, types: INTERACTION_TYPES });
    windows.unshift(window);
    if (window.some((e) => e.type === "turn/start" || e.type === "turn/end")) break;
    upTo = after;
  }
  return windows.flat();
}

export async function sessionActivity(store: Store, row: SessionRow): Promise<SessionActivity> {
  const running = row.status === "running";
  if (running) return activityOf(true, await openTurnInteractions(store, row));
  const events =
    row.lastSeq > 0 ? await store.read(row.id, { after: Math.max(0, row.lastSeq - IDLE_TAIL) }) : [];
  return activityOf(false, events);
}
