/**
 * M18 as a plugin on `agent/request-error` (L10): retryable failures are re-requested in the same step from
 * the same durable history, with exponential backoff and jitter, or the provider's Retry-After when it is
 * at most `max_delay_ms` (above that, normal mode gives up). The count is per step, because the loop
 * numbers attempts per step.
 *
 * Nothing here is model-visible (M16): the loop logs `assistant/attempt`; this logs `llm/retry` before the
 * wait, and the loop logs `llm/retry-started` after it.
 */
import type { Plugin } from "../loop/plugin.js";
import { type RetryConfig, RetryPolicy } from "../model/retry.js";

export function llmRetryPlugin(config: Partial<RetryConfig> = {}, random?: () => number): Plugin {
  const policy = new RetryPolicy(config, random);
  return {
    name: "llm-retry",
    setup(ctx) {
      ctx.hooks.onWaterfall(
        "agent/request-error",
        (state) => {
          if (state.decision.kind === "retry") return state;
          const decision = policy.decide(state.error, state.attempt);
          if (!decision.retry) return state;
          state.emit({
            type: "llm/retry",
            data: {
              attempt: state.attempt,
              delayMs: decision.delayMs,
              error: { code: state.error.code, message: state.error.message },
            },
          });
          return { ...state, decision: { kind: "retry", delayMs: decision.delayMs } };
        },
        { plugin: "llm-retry" },
      );
    },
  };
}
