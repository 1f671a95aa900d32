/**
 * C3, C4, C5: the numbers that decide when to compact and how much to keep.
 *
 * - threshold = floor(min(W × threshold_ratio, W − O − headroom))   (C4; 0.8 and 65 536 by default)
 * - retain    = floor((W − O) × retain_ratio)                        (C5; 0.16 by default)
 *
 * W is the route's context window, O the reserved output (the request's max tokens). For W = 1 048 576 and
 * O = 256 000 this gives threshold 727 040 and retain 126 812 (the seed's computed example).
 */
import { type Config, DEFAULT_CONFIG } from "../../config/schema.js";

export type CompactionSettings = {
  auto: boolean;
  thresholdRatio: number;
  headroomTokens: number;
  retainRatio: number;
  maxOverflowRetries: number;
  /** C4: summarise attempts after the first (`compactionRetries`): 1 → two attempts. */
  retries: number;
  /** C6: the summary call's output cap (reasoning included). */
  summaryMaxTokens: number;
};

/** The config file's `compaction:` slice as the plugin's settings (the schema holds the defaults). */
export function compactionSettingsFrom(slice: Config["compaction"]): CompactionSettings {
  return {
    auto: slice.auto,
    thresholdRatio: slice.threshold_ratio,
    headroomTokens: slice.headroom_tokens,
    retainRatio: slice.retain_ratio,
    maxOverflowRetries: slice.max_overflow_retries,
    retries: slice.retries,
    summaryMaxTokens: slice.summary_max_tokens,
  };
}

export const DEFAULT_COMPACTION: CompactionSettings = compactionSettingsFrom(DEFAULT_CONFIG.compaction);

export type CompactionBudget = { threshold: number; retain: number };

export function compactionBudget(
  window: number,
  reservedOutput: number,
  settings: Pick<
    CompactionSettings,
    "thresholdRatio" | "headroomTokens" | "retainRatio"
  > = DEFAULT_COMPACTION,
): CompactionBudget {
  const usable = Math.max(0, window - reservedOutput);
  const threshold = Math.floor(
    Math.max(0, Math.min(window * settings.thresholdRatio, usable - settings.headroomTokens)),
  );
  const retain = Math.floor(usable * settings.retainRatio);
  return { threshold, retain };
}
