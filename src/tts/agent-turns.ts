/**
 * `followAgentTurns`: what a speaker needs from a running agent, as four calls: a turn starts, a text delta
 * arrives, the turn must stop (a steer was queued, the turn was cancelled), the turn ended with its reply.
 * The CLI speaker and the server's speech route both listen through it.
 *
 * Invariants:
 * - Only `text` deltas are spoken; `reasoning` deltas never reach a listener (seed 000: never speak
 *   reasoning; inline `<think>` blocks are stripped later by the chunker and the cleaner).
 * - Joining an agent in the middle of a turn reports that turn as `late` (its beginning was not seen).
 * - The reply text of a turn is the text blocks of its `assistant/message` events.
 */
import type { LogEvent } from "../log/events.js";
import type { LiveDelta } from "../loop/agent.js";
import type { LogView } from "../loop/plugin.js";

export type SpeakingAgent = {
  onDelta(listener: (delta: LiveDelta) => void): () => void;
  readonly log: Pick<LogView, "events" | "onEvents" | "last">;
};

export type TurnListener = {
  startTurn(turn: number, late: boolean): void;
  delta(turn: number, text: string): void;
  stop(turn: number): void;
  endTurn(turn: number, replyText: string): void;
};

export function followAgentTurns(agent: SpeakingAgent, listener: TurnListener): () => void {
  const start = agent.log.last("turn/start");
  const end = agent.log.last("turn/end");
  let current: number | undefined;
  if (start?.turn !== undefined && (!end || end.seq < start.seq)) {
    current = start.turn;
    listener.startTurn(start.turn, true);
  }
  const replies = new Map<number, string>();
  const offDelta = agent.onDelta((delta) => {
    if (delta.type !== "text") return;
    if (current !== delta.turn) {
      current = delta.turn;
      listener.startTurn(delta.turn, true);
    }
    listener.delta(delta.turn, delta.delta);
  });
  const offEvents = agent.log.onEvents((events) => {
    for (const event of events) handle(event);
  });
  function handle(event: LogEvent): void {
    const turn = event.turn;
    if (event.type === "turn/start" && turn !== undefined) {
      current = turn;
      replies.set(turn, "");
      listener.startTurn(turn, false);
    } else if (event.type === "assistant/message" && turn !== undefined) {
      const text = event.data.blocks.map((b) => (b.type === "text" ? b.text : "")).join("");
      replies.set(turn, `${replies.get(turn) ?? ""}${text}`);
    } else if (event.type === "agent/inbox/spliced") {
      const steer = event.data.op !== "clear" && event.data.items.some((item) => item.mode === "steer");
      if (steer && current !== undefined) listener.stop(current);
    } else if (event.type === "turn/end" && turn !== undefined) {
      if (event.data.reason === "aborted" || event.data.reason === "interrupted") listener.stop(turn);
      else listener.endTurn(turn, replies.get(turn) ?? "");
      replies.delete(turn);
      if (current === turn) current = undefined;
    }
  }
  return () => {
    offDelta();
    offEvents();
  };
}
