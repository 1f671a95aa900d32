/**
 * G1 repeat-tool reminder: a `tools/post-execute` listener that counts consecutive identical calls (same
 * tool, canonically equal arguments — keys sorted) and adds an advisory context at 3, 5 and 8.
 *
 * Invariants:
 * - Advisory only: it adds `additionalContexts`, never changes or blocks the result. Denied calls count.
 * - Excluded tools neither count nor reset the chain; `reset()` (the loop calls it on a user prompt) does.
 * - In memory, one instance per agent (R2: not restored on resume). Silent after the last threshold.
 */
import type { HookBus } from "../../hooks/hook-bus.js";
import { canonicalJson } from "../arguments.js";
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

  reset(): void {
    this.lastKey = undefined;
    this.count = 0;
  }

  observe(state: PostExecuteState): PostExecuteState {
    const name = state.call.name;
    if (this.options.include?.length && !this.options.include.includes(name)) return state;
    if (this.options.exclude?.includes(name)) return state;
    const args = state.call.args === undefined ? state.call.rawArguments : canonicalJson(state.call.args);
    const key = `${name}\u0000${args}`;
    this.count = key === this.lastKey ? this.count + 1 : 1;
    this.lastKey = key;
    const index = this.thresholds.indexOf(this.count);
    if (index < 0) return state;
    const text = index === 0 ? FIRST_REMINDER : laterReminder(name, this.count, this.preview(args));
    const contexts = [...(state.output.additionalContexts ?? []), text];
    return { ...state, output: { ...state.output, additionalContexts: contexts } };
  }

  private preview(args: string): string {
    if (args.length <= this.previewChars) return args;
    return `${args.slice(0, this.previewChars)}… (+${args.length - this.previewChars} more chars)`;
  }
}
