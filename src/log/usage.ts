/**
 * M20: token usage per request, turn and session, read from the log alone (pure).
 *
 * Where usage is recorded:
 * - `assistant/message.usage`: one model request of the loop (the provider's final counts).
 * - `compaction/summary.usage`, or `compaction/end.usage` when the summary was refused after it arrived:
 *   the compaction side request (C6).
 * - `approval/reviewed.usage`: the auto-review side request (S7).
 * - `session/title.usage`: the title side request.
 *
 * Invariants:
 * - Disjoint (M20): `input` is the uncached input (cache writes included, they are billed as input or
 *   more), `cachedInput` the cache reads, `output` everything generated; `reasoning` is the part of
 *   `output` the provider says was reasoning (a subset, never added to a total a second time).
 *   `cacheWriteInput` is the part of `input` that was written to the cache (Anthropic bills it apart).
 * - A retried request counts once: a failed attempt (`assistant/attempt`, M16) carries no usage because the
 *   provider reported none before the stream broke; only the reply that arrived is counted. An interrupted
 *   reply (L7) has no usage either.
 * - A fork (S1) starts with a copy of its parent's events above `session/end-seed`; they are the parent's
 *   requests and are not counted again in the fork.
 */
import type { LogEvent, Usage } from "./events.js";

export type UsageTotals = {
  /** Requests whose usage the log records. */
  requests: number;
  /** Uncached input tokens (cache writes included). */
  input: number;
  /** Input tokens read from the provider's cache. */
  cachedInput: number;
  output: number;
  /** The reasoning part of `output`. */
  reasoning: number;
  /** The part of `input` written to the cache, when the provider reports it; absent means 0. */
  cacheWriteInput?: number;
};

export function emptyUsage(): UsageTotals {
  return { requests: 0, input: 0, cachedInput: 0, output: 0, reasoning: 0 };
}

export function addUsage(a: UsageTotals, b: UsageTotals): UsageTotals {
  const sum: UsageTotals = {
    requests: a.requests + b.requests,
    input: a.input + b.input,
    cachedInput: a.cachedInput + b.cachedInput,
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
  };
  const writes = (a.cacheWriteInput ?? 0) + (b.cacheWriteInput ?? 0);
  if (writes > 0) sum.cacheWriteInput = writes;
  return sum;
}

/** One request's totals from the provider usage recorded in an event. */
export function usageTotalsOf(usage: Usage): UsageTotals {
  const totals: UsageTotals = {
    requests: 1,
    input: count(usage.inputTokens) + count(usage.cacheWriteTokens),
    cachedInput: count(usage.cacheReadTokens),
    output: count(usage.outputTokens),
    reasoning: count(usage.reasoningTokens),
  };
  if (count(usage.cacheWriteTokens) > 0) totals.cacheWriteInput = count(usage.cacheWriteTokens);
  return totals;
}

/** The request usage an event records, if any. */
export function requestUsage(event: LogEvent): Usage | undefined {
  switch (event.type) {
    case "assistant/message":
    case "compaction/summary":
    case "compaction/end":
    case "approval/reviewed":
    case "session/title":
      return (event.data as { usage?: Usage }).usage;
    default:
      return undefined;
  }
}

/** The event types `usageOf` reads (with `session/end-seed`), for a store read that skips the rest. */
export const USAGE_EVENT_TYPES = [
  "session/end-seed",
  "assistant/message",
  "compaction/summary",
  "compaction/end",
  "approval/reviewed",
  "session/title",
] as const;

export function usageOf(events: readonly LogEvent[]): {
  session: UsageTotals;
  byTurn: Map<number, UsageTotals>;
  lastRequest: UsageTotals | undefined;
} {
  // S1: a fork's copied parent events sit above its `session/end-seed` marker.
  let from = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]?.type === "session/end-seed") {
      from = i + 1;
      break;
    }
  }
  let session = emptyUsage();
  const byTurn = new Map<number, UsageTotals>();
  let lastRequest: UsageTotals | undefined;
  for (let i = from; i < events.length; i++) {
    const event = events[i] as LogEvent;
    const usage = requestUsage(event);
    if (!usage) continue;
    const one = usageTotalsOf(usage);
    session = addUsage(session, one);
    if (event.turn !== undefined)
      byTurn.set(event.turn, addUsage(byTurn.get(event.turn) ?? emptyUsage(), one));
    lastRequest = one;
  }
  return { session, byTurn, lastRequest };
}

function count(value: number | undefined): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/** 950, 12.3k, 1.2M: three significant figures at most, never "1000k". */
export function formatTokens(n: number): string {
  const value = Math.max(0, Math.round(n));
  if (value < 1000) return String(value);
  if (value < 999_950) return `${trimZero((value / 1000).toFixed(1))}k`;
  return `${trimZero((value / 1_000_000).toFixed(1))}M`;
}

function trimZero(fixed: string): string {
  return fixed.endsWith(".0") ? fixed.slice(0, -2) : fixed;
}
