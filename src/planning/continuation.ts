/**
 * §9 continuation checks at turn end (beyond DSH): plugins on `agent/turn-stopping`, each switchable. A turn
 * about to end with no tool call gets one continuation user message (source `continuation`) when:
 *   (a) the reply has no visible text (blank, whitespace or reasoning only; M13),
 *   (b) the todo list still has pending or in-progress items (P1),
 *   (d) the final text announces an action it did not take (./announced-action.ts),
 * and a length stop (M14) gets one automatic "continue"; a child that must report through
 * `structured_output` (S4) and ends without it is nudged once. (c) an armed goal is left to goal rounds.
 *
 * Invariants:
 * - At most one check fires per stop, in plugin order; all of them together nudge at most
 *   `continuation.max_nudges` times per turn (the length continue and the report nudge at most once each,
 *   within that budget), so a model that truly means to stop can.
 * - The checks read only the log and the reply: the todo list is the newest successful `todo_write` call's
 *   arguments (P1), which survives restarts.
 *
 * Model-visible strings (our words): the NUDGE_* texts below.
 */

import type { MessageAbout } from "../log/events.js";
import type { TurnStoppingEvent } from "../loop/hooks.js";
import type { Plugin, PluginContext } from "../loop/plugin.js";
import { todosFromLog } from "../tools/todo/todos-from-log.js";
import { announcesAction } from "./announced-action.js";

export const NUDGE_EMPTY =
  "Your last reply had no visible text and no tool call, so nothing happened. Continue the task now: call the tool you need next, or, if the work is finished, tell the user the outcome.";

export function nudgeOpenTodos(open: readonly { content: string; status: string }[]): string {
  const list = open.map((t) => `- [${t.status}] ${t.content}`).join("\n");
  return `Your todo list still has open items:\n${list}\nContinue with them now. If some are done or no longer needed, update the list with todo_write; if you are blocked, tell the user what you need.`;
}

export const NUDGE_ANNOUNCED =
  "You said what you would do next but ended your turn without calling a tool, so it has not happened. If that step is still needed, do it now with a tool call. If you meant to stop, tell the user what is done and what remains.";

export const NUDGE_LENGTH =
  "Your last reply was cut off at the output token limit, and any tool call in it was dropped. Continue from where you stopped. Keep each reply shorter; split large file contents across several smaller edits.";

export function nudgeReport(tool: string): string {
  return `You ended without reporting your result. Call the \`${tool}\` tool now, with arguments that match its schema exactly; only that call counts as your result.`;
}

export type ContinuationOptions = {
  max_nudges: number;
  empty_reply: boolean;
  open_todos: boolean;
  announced_action: boolean;
  length_continue: boolean;
  structured_output: boolean;
};

/** Shared per-agent state: how many nudges this turn, and whether one fired at this stop. */
class NudgeBudget {
  private turn = 0;
  private step = 0;
  private used = 0;
  private readonly once = new Set<string>();

  constructor(private readonly max: number) {}

  /** Takes a nudge for this stop if the budget allows and no other check took one. */
  take(event: TurnStoppingEvent, kind: string, oncePerTurn: boolean): boolean {
    if (event.turn !== this.turn) {
      this.turn = event.turn;
      this.step = 0;
      this.used = 0;
      this.once.clear();
    }
    if (this.step === event.step || this.used >= this.max) return false;
    if (oncePerTurn && this.once.has(kind)) return false;
    this.step = event.step;
    this.used++;
    this.once.add(kind);
    return true;
  }
}

declare module "../loop/plugin.js" {
  interface PluginApiMap {
    continuationBudget: NudgeBudget;
  }
}

/** A check's nudge: the model-visible text, and for people's views the number of open todos (b). */
type Nudge = { text: string; openTodos?: number };
type Check = (
  event: TurnStoppingEvent,
  ctx: PluginContext,
) => string | Nudge | undefined | Promise<string | Nudge | undefined>;
type CheckName = Extract<MessageAbout, { kind: "continuation" }>["check"];

function checkPlugin(name: CheckName, max: number, oncePerTurn: boolean, check: Check): Plugin {
  return {
    name: `continuation:${name}`,
    uses: ["continuationBudget"], // §9: the checks share one budget of nudges per turn
    setup(ctx) {
      let budget = ctx.use("continuationBudget");
      if (!budget) {
        budget = new NudgeBudget(max);
        ctx.provide("continuationBudget", budget);
      }
      ctx.hooks.onSerial(
        "agent/turn-stopping",
        async (event) => {
          const found = await check(event, ctx);
          if (found === undefined || !budget.take(event, name, oncePerTurn)) return;
          const nudge = typeof found === "string" ? { text: found } : found;
          const about: MessageAbout = {
            kind: "continuation",
            check: name,
            ...(nudge.openTodos === undefined ? {} : { openTodos: nudge.openTodos }),
          };
          event.inject({ text: nudge.text, source: "continuation", about });
        },
        { plugin: `continuation:${name}` },
      );
    },
  };
}

const hasToolCall = (event: TurnStoppingEvent) => event.lastBlocks.some((b) => b.type === "tool-call");
const visibleText = (event: TurnStoppingEvent) =>
  event.lastBlocks
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("")
    .trim();

/** M14: one automatic continue after a length stop. */
export const lengthContinue = (max: number): Plugin =>
  checkPlugin("length", max, true, (event) => (event.result === "max-tokens" ? NUDGE_LENGTH : undefined));

/**
 * (a) M13: a reply with nothing visible and no call. The model layer already turns such a reply into a
 * retryable `EMPTY_RESPONSE` (src/model/assembler.ts), so the check has two halves: a blank reply that still
 * reaches turn end gets a nudge in the turn, and a turn that ended `error` with `EMPTY_RESPONSE` once the
 * retries ran out gets one follow-up turn with the same nudge (not after a turn that was itself a nudge).
 */
export const emptyReplyCheck = (max: number): Plugin => {
  const inTurn = checkPlugin("empty-reply", max, false, (event) =>
    event.result === "completed" && !hasToolCall(event) && visibleText(event) === ""
      ? NUDGE_EMPTY
      : undefined,
  );
  return {
    ...inTurn,
    async setup(ctx) {
      await inTurn.setup(ctx);
      ctx.hooks.onSerial(
        "agent/turn-end",
        async ({ reason }) => {
          if (reason !== "error" || max === 0) return;
          if (ctx.log.last("turn/end")?.data.error?.code !== "EMPTY_RESPONSE") return;
          if (firstUserSource(ctx) === "continuation") return;
          await ctx.inbox.followup(NUDGE_EMPTY, "continuation", {
            kind: "continuation",
            check: "empty-reply",
          });
        },
        { plugin: inTurn.name },
      );
    },
  };
};

/** The source of the first user message of the last turn. */
function firstUserSource(ctx: PluginContext): string | undefined {
  const events = ctx.log.events;
  let start = events.length - 1;
  while (start >= 0 && events[start]!.type !== "turn/start") start--;
  for (let i = Math.max(start, 0); i < events.length; i++) {
    const event = events[i]!;
    if (event.type === "user/message") return event.data.source;
  }
  return undefined;
}

/** (b) P1: open todos at turn end. */
export const openTodosCheck = (max: number): Plugin =>
  checkPlugin("open-todos", max, false, (event, ctx) => {
    if (event.result !== "completed" || hasToolCall(event)) return undefined;
    const open = (todosFromLog(ctx.log.events) ?? []).filter((t) => t.status !== "completed");
    return open.length ? { text: nudgeOpenTodos(open), openTodos: open.length } : undefined;
  });

/** (d) an announced action that was not taken. */
export const announcedActionCheck = (max: number): Plugin =>
  checkPlugin("announced-action", max, false, (event) =>
    event.result === "completed" && !hasToolCall(event) && announcesAction(visibleText(event))
      ? NUDGE_ANNOUNCED
      : undefined,
  );

/** S4: a child that must report through `tool` and ended without a successful call of it. */
export const reportToolCheck = (max: number, tool = "structured_output"): Plugin =>
  checkPlugin("report-tool", max, true, (event, ctx) => {
    if (event.result !== "completed" || hasToolCall(event)) return undefined;
    const offered = ctx.currentTools().some((t) => t.name === tool);
    if (!offered || reported(ctx, tool)) return undefined;
    return nudgeReport(tool);
  });

function reported(ctx: PluginContext, tool: string): boolean {
  const failed = new Set<string>();
  for (const event of ctx.log.events) {
    if (event.type === "tool/result" && event.data.name === tool && event.data.isError)
      failed.add(event.data.callId);
  }
  return ctx.log.events.some(
    (e) => e.type === "tool/call" && e.data.name === tool && !failed.has(e.data.callId),
  );
}

/** The enabled checks in their order: length first (the reply was cut), then (a), (b), (d), the report. */
export function continuationPlugins(options: ContinuationOptions): Plugin[] {
  const max = options.max_nudges;
  return [
    ...(options.length_continue ? [lengthContinue(max)] : []),
    ...(options.empty_reply ? [emptyReplyCheck(max)] : []),
    ...(options.open_todos ? [openTodosCheck(max)] : []),
    ...(options.announced_action ? [announcedActionCheck(max)] : []),
    ...(options.structured_output ? [reportToolCheck(max)] : []),
  ];
}
