/**
 * C3, C4, C5: the numbers that decide when to compact and how much to keep.
 *
 * - threshold = floor(min(W × threshold_ratio, W − O − headroom))   (C4; 0.8 and 65 536 by default)
 * - retain    = floor((W − O) × retain_ratio)                        (C5; 0.16 by default)
 *
 * W is the route's context window, O the reserved output (the request's max tokens). For W = 1 048 576 and
 * O = 256 000 this gives threshold 727 040 and retain 126 812 (the seed's computed example).
 */

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

export const DEFAULT_COMPACTION: CompactionSettings = {
  auto: true,
  thresholdRatio: 0.8,
  headroomTokens: 65_536,
  retainRatio: 0.16,
  maxOverflowRetries: 1,
  retries: 1,
  summaryMaxTokens: 65_536,
};

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
