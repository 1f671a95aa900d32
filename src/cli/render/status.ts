/**
 * The one-line status shown while the agent works: `⠋ thinking · 12s · 3.4k tokens · $0.01 · Esc to
 * interrupt`. Pure; the caller owns the timer and the repaint rate.
 */

import type { LogEvent } from "../../log/events.js";
import { formatCost, formatTokens } from "../../model/pricing.js";
import { formatElapsed } from "../../transcript/elapsed.js";
import type { Palette } from "./style.js";
import { sanitize, truncate } from "./style.js";

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

/**
 * What the status line says the agent is doing after `event`, for run and chat alike: thinking at a step's
 * start and after a result, `running <tool>` while a call runs, compacting; undefined when the event does
 * not change it.
 */
export function activityAfter(event: LogEvent): string | undefined {
  switch (event.type) {
    case "step/start":
    case "tool/result":
      return "thinking";
    case "tool/call":
      return event.data.synthetic ? undefined : `running ${sanitize(event.data.name)}`;
    case "compaction/start":
      return "compacting";
    default:
      return undefined;
  }
}
