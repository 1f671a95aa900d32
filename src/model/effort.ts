/**
 * M4, M26: the request-body fields that carry the effort level, per reasoning switch of the catalog.
 * This is the only place that reads a `ReasoningSwitch`.
 *
 * Invariants: effort is validated before any I/O (M4, no clamping); `off` never turns thinking on.
 */
import type { ReasoningSwitch } from "./catalog.js";
import { EFFORTS, type Effort, LlmError } from "./types.js";

/** Anthropic thinking budgets; always kept below the output cap so the reply has room. */
const ANTHROPIC_BUDGET: Readonly<Record<Exclude<Effort, "off">, number>> = {
  low: 4_096,
  high: 16_384,
  max: 32_768,
};

/** Wire values for `reasoning_effort`-style fields. */
const EFFORT_VALUE: Readonly<Record<Exclude<Effort, "off">, string>> = {
  low: "low",
  high: "high",
  max: "high",
};

export function assertEffort(effort: string): asserts effort is Effort {
  if (!(EFFORTS as readonly string[]).includes(effort)) {
    throw new LlmError("INVALID_REQUEST", `unsupported reasoning effort "${effort}" (off, low, high, max)`);
  }
}

/** True when the request asks the model to think (M3: no temperature then). */
export function thinkingOn(reasoning: ReasoningSwitch, effort: Effort): boolean {
  return effort !== "off" && reasoning.kind !== "none";
}

export function reasoningBody(
  reasoning: ReasoningSwitch,
  effort: Effort,
  maxTokens: number,
): Record<string, unknown> {
  const on = effort !== "off";
  switch (reasoning.kind) {
    case "deepseek-thinking":
      return on
        ? { thinking: { type: "enabled" }, reasoning_effort: deepseekEffort(effort) }
        : { thinking: { type: "disabled" } };
    case "together":
      return { reasoning: { enabled: on } };
    case "reasoning-effort":
      return on ? { reasoning_effort: EFFORT_VALUE[effort] } : {};
    case "openrouter":
      return { reasoning: { effort: on ? EFFORT_VALUE[effort] : "none" } };
    case "anthropic-effort":
      return on
        ? { thinking: { type: "enabled" }, output_config: { effort } }
        : { thinking: { type: "disabled" } };
    case "anthropic-budget": {
      if (!on) return { thinking: { type: "disabled" } };
      const budget = Math.min(ANTHROPIC_BUDGET[effort], Math.max(1_024, maxTokens - 1_024));
      return { thinking: { type: "enabled", budget_tokens: budget } };
    }
    case "none":
      return {};
    default:
      return assertNever(reasoning);
  }
}

/** DeepSeek takes `high` and `max`; `low` maps to `high` rather than being refused. */
function deepseekEffort(effort: Exclude<Effort, "off">): string {
  return effort === "max" ? "max" : "high";
}

function assertNever(value: never): never {
  throw new Error(`unhandled reasoning switch: ${JSON.stringify(value)}`);
}
