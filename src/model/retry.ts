/**
 * M18 retry policy, and a small runner for callers that make one model call per step.
 *
 * Invariants:
 * - `RetryPolicy.decide` is pure apart from the injected `random`: same error, attempt and random value,
 *   same decision. The caller owns the counter (M18: per step; the loop resets it at each step).
 * - Normal mode: only `retryableCodes`, at most `maxRetries` retries. A `Retry-After` up to `maxDelayMs`
 *   is used as given; above it the policy gives up. Always mode: no limit, every code but `ABORTED`, and
 *   a long `Retry-After` falls back to local backoff.
 * - Backoff n (1-based): min(min(initial·2^(n−1), max) · (1 − j + 2j·random), max).
 * - M16: a failed attempt's output goes to `onAttemptFailed` for the log and nowhere else; the runner
 *   never returns it. `onRetry` runs before the wait (`llm/retry`), `onRetryStarted` after it.
 */
import { type Config, DEFAULT_CONFIG } from "../config/schema.js";
import type { AssistantBlock } from "../log/messages.js";
import { abortedError } from "./transport.js";
import {
  type AssembledReply,
  collectReply,
  LlmError,
  type LlmErrorCode,
  type ModelAdapter,
  type ModelPart,
  type ModelRequest,
} from "./types.js";

export type RetryConfig = {
  mode: "normal" | "always";
  maxRetries: number;
  initialDelayMs: number;
  maxDelayMs: number;
  jitterRatio: number;
  retryableCodes: readonly LlmErrorCode[];
};

/** The config file's `retry:` slice as a policy's settings (the schema holds the defaults, M18). */
export function retrySettingsFrom(slice: Config["retry"]): Omit<RetryConfig, "retryableCodes"> {
  return {
    mode: slice.mode,
    maxRetries: slice.max_retries,
    initialDelayMs: slice.initial_delay_ms,
    maxDelayMs: slice.max_delay_ms,
    jitterRatio: slice.jitter_ratio,
  };
}

/** M18's defaults: the config schema's, and the codes worth another attempt. */
export const DEFAULT_RETRY: Readonly<RetryConfig> = Object.freeze({
  ...retrySettingsFrom(DEFAULT_CONFIG.retry),
  retryableCodes: Object.freeze(["EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"] as const),
});

export type RetryDecision =
  | { retry: true; delayMs: number; basis: "retry-after" | "backoff" }
  | { retry: false; reason: "not-retryable" | "exhausted" | "retry-after-too-long" | "aborted" };

export class RetryPolicy {
  readonly config: Readonly<RetryConfig>;
  constructor(
    config: Partial<RetryConfig> = {},
    private readonly random: () => number = Math.random,
  ) {
    this.config = Object.freeze({ ...DEFAULT_RETRY, ...config });
  }

  /** `attempt` is the 1-based number of the attempt that just failed. */
  decide(error: LlmError, attempt: number): RetryDecision {
    const c = this.config;
    if (error.code === "ABORTED") return { retry: false, reason: "aborted" };
    if (c.mode === "normal") {
      if (!c.retryableCodes.includes(error.code)) return { retry: false, reason: "not-retryable" };
      if (attempt > c.maxRetries) return { retry: false, reason: "exhausted" };
    }
    if (error.retryAfterMs !== undefined) {
      if (error.retryAfterMs <= c.maxDelayMs) {
        return { retry: true, delayMs: error.retryAfterMs, basis: "retry-after" };
      }
      if (c.mode === "normal") return { retry: false, reason: "retry-after-too-long" };
    }
    return { retry: true, delayMs: this.backoff(attempt), basis: "backoff" };
  }

  backoff(n: number): number {
    const c = this.config;
    const base = Math.min(c.initialDelayMs * 2 ** (n - 1), c.maxDelayMs);
    const jitter = 1 - c.jitterRatio + 2 * c.jitterRatio * this.random();
    return Math.round(Math.min(base * jitter, c.maxDelayMs));
  }
}

/** What the loop logs around retries (M16, M18): `assistant/attempt`, `llm/retry`, `llm/retry-started`. */
export type RetryHooks = {
  onAttemptFailed?(blocks: AssistantBlock[], error: LlmError, attempt: number): void | Promise<void>;
  /** `attempt` is the failed one; called before the wait. */
  onRetry?(attempt: number, delayMs: number, error: LlmError): void | Promise<void>;
  /** `attempt` is the one about to start; called after the wait. */
  onRetryStarted?(attempt: number): void | Promise<void>;
};

export type RetryRun = {
  adapter: ModelAdapter;
  /** A function is called again for each attempt (L10: rebuilt from the same durable history). */
  request: ModelRequest | (() => ModelRequest);
  policy?: RetryPolicy;
  hooks?: RetryHooks;
  onPart?(part: ModelPart, attempt: number): void;
  /** Injectable for tests; must reject with ABORTED when the signal fires. */
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
};

export type RetriedReply = AssembledReply & { attempts: number };

/** Calls the adapter until a reply succeeds or the policy gives up; then throws the last LlmError. */
export async function callWithRetry(run: RetryRun): Promise<RetriedReply> {
  const policy = run.policy ?? new RetryPolicy();
  const sleep = run.sleep ?? abortableSleep;
  for (let attempt = 1; ; attempt++) {
    const request = typeof run.request === "function" ? run.request() : run.request;
    try {
      const reply = await collectReply(run.adapter.stream(request), (part) => run.onPart?.(part, attempt));
      return { ...reply, attempts: attempt };
    } catch (caught) {
      if (!(caught instanceof LlmError)) throw caught;
      await run.hooks?.onAttemptFailed?.(caught.partial, caught, attempt);
      const decision = policy.decide(caught, attempt);
      if (!decision.retry) throw caught;
      await run.hooks?.onRetry?.(attempt, decision.delayMs, caught);
      await sleep(decision.delayMs, request.signal);
      await run.hooks?.onRetryStarted?.(attempt + 1);
    }
  }
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError());
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
