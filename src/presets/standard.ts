/**
 * The standard preset: the default composition of plugins, in order. A product changes behaviour by
 * changing this list, not by forking the loop (ARCHITECTURE "Layers").
 *
 * Order matters where listeners share a hook: on `agent/pre-step` the archived guard runs before anything
 * adds messages; on `agent/request-error` retry runs first.
 */
import type { Config } from "../config/schema.js";
import { runtimeContextPlugin } from "../context/runtime-context.js";
import { systemPromptPlugin } from "../context/system-prompt.js";
import { archivedSessionGuard } from "../guards/archived-session.js";
import type { Plugin } from "../loop/plugin.js";
import { llmRetryPlugin } from "../retry/llm-retry.js";

export type StandardPresetOptions = {
  config: Config;
  /** Plugins appended after the standard ones (tools, a product's own). */
  extra?: readonly Plugin[];
  /** For tests: the retry jitter source. */
  random?: () => number;
};

export function standardPlugins(options: StandardPresetOptions): Plugin[] {
  const { retry } = options.config;
  return [
    archivedSessionGuard, // L18
    systemPromptPlugin(), // SP2, SP3
    runtimeContextPlugin, // L13, SP4
    llmRetryPlugin(
      {
        mode: retry.mode,
        maxRetries: retry.max_retries,
        initialDelayMs: retry.initial_delay_ms,
        maxDelayMs: retry.max_delay_ms,
        jitterRatio: retry.jitter_ratio,
      },
      options.random,
    ), // M18, L10
    ...(options.extra ?? []),
  ];
}
