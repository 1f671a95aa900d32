/**
 * Honest repair of an interrupted history (L8, L9, R1). Nothing is edited: closing events are appended so
 * every tool call the model made has a result, and the model is told what is known about each one.
 *
 * - L8: a call cancellation stopped before it started gets a synthetic `tool/call` and the result
 *   `Error: tool call aborted before dispatch` (ABORTED_BEFORE_DISPATCH).
 * - L9: when a step fails, a call recorded as started without a result is TOOL_OUTCOME_UNKNOWN (it may
 *   have had effects); a call never recorded as started is TOOL_NOT_STARTED.
 * - R1: opening a session whose last turn is open closes its step and turn (`interrupted`); the interrupted
 *   work is never re-run.
 *
 * Model experience (the texts the model sees), in our own words:
 */
import type { LogEvent, NewEvent } from "../log/events.js";
import type { ToolCallBlock } from "../log/messages.js";
import { abortedBeforeDispatch as abortedOutput } from "../tools/pipeline.js";

/** T5, L8: the pipeline's own answer for a call aborted before it started; one text for both paths. */
export const ABORTED_BEFORE_DISPATCH_TEXT = abortedOutput().text;

export const OUTCOME_UNKNOWN_TEXT =
  "Error: this tool call was recorded as started, but no result was saved before it was interrupted, so its outcome is unknown. Decide from what the tool does: run it again only if it is read-only or idempotent; if it may have changed something, check the real state first or ask the user. Do not repeat it blindly.";

export const NOT_STARTED_TEXT =
  "Error: this tool call was interrupted before it was recorded as started. Run it again if you still need it.";

/** Fork variants (L9): the inherited history was cut while the call was open in the parent. */
export const FORK_OUTCOME_UNKNOWN_TEXT =
  "Error: the history this branch inherited shows this tool call starting but not its result; the parent session may have finished it after the fork. Check the real state before deciding to run it again. Do not repeat it blindly.";
export const FORK_NOT_STARTED_TEXT =
  "Error: the history this branch inherited has no record of this tool call starting; the parent session may have run it after the fork. Check the real state before deciding to run it again. Do not repeat it blindly.";

export type CloseMode = "failed-step" | "fork";

type OpenCall = { call: ToolCallBlock; started: boolean };

/** The tool calls of the last assistant message that have no result yet, in model order. */
export function unansweredCalls(events: readonly LogEvent[]): OpenCall[] {
  let assistantIndex = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.type === "assistant/message") {
      assistantIndex = i;
      break;
    }
  }
  if (assistantIndex < 0) return [];
  const assistant = events[assistantIndex] as LogEvent<"assistant/message">;
  const answered = new Set<string>();
  const started = new Set<string>();
  for (let i = assistantIndex + 1; i < events.length; i++) {
    const event = events[i]!;
    if (event.type === "tool/result") answered.add(event.data.callId);
    if (event.type === "tool/call") started.add(event.data.callId);
  }
  return assistant.data.blocks
    .filter((b): b is ToolCallBlock => b.type === "tool-call" && !answered.has(b.id))
    .map((call) => ({ call, started: started.has(call.id) }));
}

/**
 * L9: a result for every unanswered call of the last assistant message. Synthetic results carry no
 * `details`: no tool body answered, so there is nothing it did to show.
 */
export function closeUnansweredCalls(
  events: readonly LogEvent[],
  where: { turn?: number; step?: number },
  mode: CloseMode = "failed-step",
): NewEvent[] {
  return unansweredCalls(events).map(({ call, started }) => {
    const code = started ? "TOOL_OUTCOME_UNKNOWN" : "TOOL_NOT_STARTED";
    const text =
      mode === "fork"
        ? started
          ? FORK_OUTCOME_UNKNOWN_TEXT
          : FORK_NOT_STARTED_TEXT
        : started
          ? OUTCOME_UNKNOWN_TEXT
          : NOT_STARTED_TEXT;
    return {
      type: "tool/result",
      data: { callId: call.id, name: call.name, text, isError: true, code, synthetic: true },
      ...where,
    } as NewEvent;
  });
}

/** L8: the synthetic pair for a call cancellation stopped before dispatch. */
export function abortedBeforeDispatch(
  call: ToolCallBlock,
  where: { turn?: number; step?: number },
): NewEvent[] {
  return [
    {
      type: "tool/call",
      data: { callId: call.id, name: call.name, arguments: call.arguments, synthetic: true },
      ...where,
    },
    {
      type: "tool/result",
      data: {
        callId: call.id,
        name: call.name,
        text: ABORTED_BEFORE_DISPATCH_TEXT,
        isError: true,
        code: abortedOutput().code ?? "ABORTED_BEFORE_DISPATCH",
        synthetic: true,
      },
      ...where,
    },
  ];
}

export type OpenTurn = { turn: number; step: number | undefined; compactionOpen: boolean };

/** Where the log stands: the open turn (and step) if the last turn has no `turn/end`. */
export function openTurnOf(events: readonly LogEvent[]): OpenTurn | undefined {
  let turnIndex = -1;
  for (let i = events.length - 1; i >= 0 && turnIndex < 0; i--) {
    const type = events[i]!.type;
    if (type === "turn/end") return undefined;
    if (type === "turn/start") turnIndex = i;
  }
  if (turnIndex < 0) return undefined;
  let step: number | undefined;
  let compactions = 0;
  for (let i = turnIndex + 1; i < events.length; i++) {
    const event = events[i]!;
    if (event.type === "step/start") step = event.step ?? 0;
    if (event.type === "step/end") step = undefined;
    if (event.type === "compaction/start") compactions++;
    if (event.type === "compaction/end") compactions = Math.max(0, compactions - 1);
  }
  return { turn: events[turnIndex]!.turn ?? 0, step, compactionOpen: compactions > 0 };
}

/** R1: the events that close a turn left open by a crash; empty when the log is closed. */
export function interruptedTurnClosers(events: readonly LogEvent[]): NewEvent[] {
  const open = openTurnOf(events);
  if (!open) return [];
  const where = { turn: open.turn, ...(open.step === undefined ? {} : { step: open.step }) };
  const closers: NewEvent[] = [];
  if (open.compactionOpen) {
    closers.push({ type: "compaction/end", data: { ok: false, error: "interrupted by a crash" }, ...where });
  }
  closers.push(...closeUnansweredCalls(events, where));
  if (open.step !== undefined) closers.push({ type: "step/end", data: { result: "error" }, ...where });
  closers.push({ type: "turn/end", data: { reason: "interrupted" }, turn: open.turn });
  return closers;
}
