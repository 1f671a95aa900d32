/**
 * C12: the tool-result pruner. Under pressure or overflow only, before any summary: every tool result on
 * the surface longer than 8192 code points becomes its first 4096, the marker, and its last 1024.
 *
 * Invariants:
 * - Nothing is edited: each rewrite appends `compaction/prune` and a `tool/result` with the same call id
 *   whose `surfaceOp` replaces the original node in place, so pairing is unchanged (C1).
 * - No age filter (as DSH): the newest result is pruned as readily as the oldest.
 * - Idempotent: a pruned text is 5120 code points plus the marker, below the limit.
 *
 * Model experience: `<head 4096>\n\n[... tool result middle pruned ...]\n\n<tail 1024>`.
 */
import type { LogEvent, NewEvent } from "../../log/events.js";
import type { SurfaceProjector } from "../../log/surface.js";
import { PRUNE_MARKER } from "./texts.js";

export const PRUNE_LIMIT = 8192;
export const PRUNE_HEAD = 4096;
export const PRUNE_TAIL = 1024;

/** What compaction needs of a session log: the events, their projection, and writes under the lease. */
export type CompactionLog = {
  readonly sessionId: string;
  readonly events: readonly LogEvent[];
  readonly surface: SurfaceProjector;
  readonly seq: number;
  add(...events: NewEvent[]): LogEvent[];
  flush(): Promise<void>;
};

export function prunedText(text: string): string | undefined {
  if (text.length <= PRUNE_LIMIT) return undefined; // UTF-16 length ≥ code points
  const points = Array.from(text);
  if (points.length <= PRUNE_LIMIT) return undefined;
  return points.slice(0, PRUNE_HEAD).join("") + PRUNE_MARKER + points.slice(-PRUNE_TAIL).join("");
}

/** Appends one replacement per oversized result; returns how many were pruned (not yet flushed). */
export function pruneToolResults(log: CompactionLog, where: { turn?: number; step?: number } = {}): number {
  const targets: { seq: number; callId: string; name: string; text: string; isError: boolean }[] = [];
  for (const node of log.surface.surface) {
    const message = node.message;
    if (message.role !== "tool") continue;
    const text = prunedText(message.text);
    if (text === undefined) continue;
    targets.push({
      seq: node.seq,
      callId: message.callId,
      name: message.name,
      text,
      isError: !!message.isError,
    });
    log.add({
      type: "compaction/prune",
      data: {
        callId: message.callId,
        resultSeq: node.seq,
        charsBefore: Array.from(message.text).length,
        charsAfter: Array.from(text).length,
      },
      ...where,
    });
  }
  for (const target of targets) {
    log.add({
      type: "tool/result",
      data: {
        callId: target.callId,
        name: target.name,
        text: target.text,
        ...(target.isError ? { isError: true } : {}),
        surfaceOp: { op: "replace", startSeq: target.seq, endSeq: target.seq },
      },
      ...where,
    });
  }
  return targets.length;
}
