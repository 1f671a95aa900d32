/**
 * G1 repeat-tool reminder: a `tools/post-execute` listener that counts consecutive identical calls (same
 * tool, canonically equal arguments — keys sorted) and adds an advisory context at 3, 5 and 8.
 *
 * Invariants:
 * - Advisory only: it adds `additionalContexts`, never changes or blocks the result. Denied calls count.
 * - Excluded tools neither count nor reset the chain; a new turn (`turn/start`) does.
 * - The chain is the log's: `fold` counts each `tool/call` as it is recorded (or read back when another
 *   process opens the session), so a session moved between servers keeps its chain; a call with no record
 *   (a pipeline used without a loop) is counted when it finishes. Silent after the last threshold.
 */
import type { HookBus } from "../../hooks/hook-bus.js";
import type { LogEvent } from "../../log/events.js";
import { canonicalJson, parseToolArguments } from "../arguments.js";
import type { PostExecuteState } from "../types.js";

export type RepeatReminderOptions = {
  thresholds?: readonly number[];
  argumentsPreviewChars?: number;
  include?: readonly string[];
  exclude?: readonly string[];
};

export const FIRST_REMINDER =
  "You have made this exact tool call, with the same arguments, several times in a row. Look carefully at the previous result before calling again: if the task is not done, change the approach or the arguments instead of repeating the call.";

export function laterReminder(tool: string, count: number, args: string): string {
  return [
    "Repeated tool call detected:",
    `- tool: ${tool}`,
    `- consecutive_calls: ${count}`,
    `- arguments: ${args}`,
    "These repeated calls are not making progress. Stop making this exact call with these arguments. Read the latest result and pick a different action or different arguments, or finish the task if you already have enough evidence.",
  ].join("\n");
}

export class RepeatToolReminder {
  private lastKey: string | undefined;
  private count = 0;
  /** The chain length at each recorded call of the running turn, until its result is observed. */
  private readonly counted = new Map<string, number>();
  private readonly thresholds: readonly number[];
  private readonly previewChars: number;

  constructor(private readonly options: RepeatReminderOptions = {}) {
    this.thresholds = options.thresholds ?? [3, 5, 8];
    this.previewChars = options.argumentsPreviewChars ?? 500;
  }

  install(hooks: HookBus): () => void {
    return hooks.onWaterfall("tools/post-execute", (state) => this.observe(state), {
      plugin: "repeat-tool-reminder",
    });
  }

  /** The log's events in order: a turn's start ends the chain; each recorded call extends it. */
  fold(event: LogEvent<"turn/start" | "tool/call">): void {
    if (event.type === "turn/start") {
      this.lastKey = undefined;
      this.count = 0;
      this.counted.clear();
    } else if (!event.data.synthetic) {
      const { callId, name, arguments: raw } = event.data;
      const count = this.extend(name, parseToolArguments(raw), raw);
      if (count !== undefined) this.counted.set(callId, count);
    }
  }

  observe(state: PostExecuteState): PostExecuteState {
    const name = state.call.name;
    const recorded = this.counted.get(state.call.callId);
    this.counted.delete(state.call.callId);
    const count = recorded ?? this.extend(name, state.call.args, state.call.rawArguments);
    if (count === undefined) return state;
    const args = state.call.args === undefined ? state.call.rawArguments : canonicalJson(state.call.args);
    const index = this.thresholds.indexOf(count);
    if (index < 0) return state;
    const text = index === 0 ? FIRST_REMINDER : laterReminder(name, count, this.preview(args));
    const contexts = [...(state.output.additionalContexts ?? []), text];
    return { ...state, output: { ...state.output, additionalContexts: contexts } };
  }

  /** One more call in the chain (same tool, canonically equal arguments); undefined for a tool not counted. */
  private extend(name: string, parsed: unknown, raw: string): number | undefined {
    if (this.options.include?.length && !this.options.include.includes(name)) return undefined;
    if (this.options.exclude?.includes(name)) return undefined;
    const key = `${name}\u0000${parsed === undefined ? raw : canonicalJson(parsed)}`;
    this.count = key === this.lastKey ? this.count + 1 : 1;
    this.lastKey = key;
    return this.count;
  }

  private preview(args: string): string {
    if (args.length <= this.previewChars) return args;
    return `${args.slice(0, this.previewChars)}… (+${args.length - this.previewChars} more chars)`;
  }
}
