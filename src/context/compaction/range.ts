/**
 * C5: which part of the surface a compaction replaces.
 *
 * Walk back from the newest node, adding costs, until the kept tail holds at least `retain` tokens (and at
 * least one node: the last balanced unit, C10). Then move the cut earlier until the tail is balanced: it
 * holds as many tool results as tool calls (+1 per call block, −1 per result), so no call is separated from
 * its result. The range is everything between node 0 and the cut.
 *
 * Invariants:
 * - Node 0 is never in the range (the system prompt, C1); later system nodes may be.
 * - No balanced cut, or an empty range, or a range that is only an earlier checkpoint → no range.
 * - A previous checkpoint inside the range is summarised again with the rest (merged).
 * - O(tail length): the walk stops at the cut, so selection at 100k events costs what the tail costs.
 */
import { type SurfaceNode, toolCallsOf } from "../../log/messages.js";

export type CompactionRange = {
  /** Surface indices, inclusive: `start` ≥ 1. */
  start: number;
  end: number;
  startSeq: number;
  endSeq: number;
  /** Heuristic tokens of the replaced nodes. */
  tokens: number;
  /** Heuristic tokens of the kept tail. */
  tailTokens: number;
};

export function selectRange(
  nodes: readonly SurfaceNode[],
  retain: number,
  costOf: (node: SurfaceNode) => number,
  isCheckpoint: (node: SurfaceNode) => boolean = () => false,
  /** The heuristic sum of every node, when the caller has it (the meter does): keeps selection O(tail). */
  surfaceSum?: number,
): CompactionRange | undefined {
  let kept = 0;
  let balance = 0;
  let cut = nodes.length;
  // The tail needs at least one node and `retain` tokens, then a balanced start.
  while (cut > 1) {
    const node = nodes[cut - 1]!;
    cut--;
    kept += costOf(node);
    balance += node.message.role === "tool" ? -1 : 0;
    balance += toolCallsOf(node.message).length;
    if (kept >= retain && balance === 0) break;
  }
  if (balance !== 0 || cut <= 1) return undefined;
  const start = 1;
  const end = cut - 1;
  if (end === start && isCheckpoint(nodes[start]!)) return undefined;
  let tokens = 0;
  if (surfaceSum !== undefined) tokens = surfaceSum - kept - costOf(nodes[0]!);
  else for (let i = start; i <= end; i++) tokens += costOf(nodes[i]!);
  return { start, end, startSeq: nodes[start]!.seq, endSeq: nodes[end]!.seq, tokens, tailTokens: kept };
}
