/**
 * The one-line status shown while the agent works: `⠋ thinking · 12s · 3.4k tokens · $0.01 · Esc to
 * interrupt`. Pure; the caller owns the timer and the repaint rate.
 */
import { formatCost, formatTokens } from "../../model/pricing.js";
import { formatElapsed } from "./elapsed.js";
import type { Palette } from "./style.js";
import { truncate } from "./style.js";

// One formatting of tokens and money for every view: the model layer's (M20).
export { formatCost, formatElapsed, formatTokens };

export const SPINNER_FRAMES: readonly string[] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export function statusLine(
  s: { frame: number; elapsedMs: number; activity: string; tokens?: number; cost?: number; hint?: string },
  p: Palette,
  width: number,
): string {
  const frame =
    SPINNER_FRAMES[((s.frame % SPINNER_FRAMES.length) + SPINNER_FRAMES.length) % SPINNER_FRAMES.length]!;
  const parts = [`${p.cyan(frame)} ${s.activity}`, formatElapsed(s.elapsedMs)];
  if (s.tokens !== undefined && s.tokens > 0) parts.push(`${formatTokens(s.tokens)} tokens`);
  if (s.cost !== undefined && s.cost > 0) parts.push(formatCost(s.cost));
  if (s.hint) parts.push(p.dim(s.hint));
  return truncate(parts.join(p.dim(" · ")), Math.max(1, width - 1));
}
