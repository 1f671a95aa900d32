/**
 * C6, C9: one compaction as a transaction on the log, under a store-level lock.
 *
 * Order: take the lock (the `compaction:<sessionId>` lease) → close a stale start → `compaction/start`
 * (flushed) → the summary call → re-check → `compaction/summary`, the checkpoint `user/message` that
 * replaces the range, the task-state reminder, `compaction/end` (one flush). Any failure appends one
 * `compaction/end {ok:false, error}` instead; the history is then unchanged.
 *
 * Invariants:
 * - Two processes never compact one session at once: the lease is taken before anything is read. A start
 *   without an end that we find while holding the lease was left by a process that died: it is closed and
 *   ignored (C9 "a stale start").
 * - The summary request is the session's own request cut after the range, plus one final user message
 *   (COMPACTION_INSTRUCTION): same system, tools and effort, so the provider's prefix cache is reused (C6).
 * - Only text is kept. Empty output, a max-tokens finish, a checkpoint not smaller than what it replaces,
 *   and a log that changed during the call each fail the attempt (C6).
 * - The checkpoint is a user message, never a system message (C8).
 */
import { randomUUID } from "node:crypto";
import type { NewEvent, Usage } from "../../log/events.js";
import type { SurfaceMessage, SurfaceNode } from "../../log/messages.js";
import { messageTokens, type TokenMeter } from "../../log/token-meter.js";
import { collectReply, LlmError, type ModelAdapter, type ModelRequest } from "../../model/types.js";
import { type LeaseStore, withLease } from "../../store/hold-lease.js";
import type { CompactionLog } from "./pruner.js";
import { type CompactionRange, selectRange } from "./range.js";
import {
  COMPACTION_INSTRUCTION,
  checkpointText,
  isCheckpointText,
  SUMMARY_EMPTY,
  SUMMARY_NOT_SMALLER,
  SUMMARY_TRUNCATED,
  SURFACE_CHANGED,
} from "./texts.js";

export type CompactionReason = "pressure" | "overflow" | "manual";

export type CompactionOutcome =
  | { kind: "compacted"; replaced: number; tokensBefore: number; tokensAfter: number }
  | { kind: "nothing" }
  | { kind: "failed"; error: string };

export type TaskStateMessage = { text: string };

export type CompactOnceOptions = {
  log: CompactionLog;
  adapter: ModelAdapter;
  meter: TokenMeter;
  /** The request the next step would send (C6: its system, tools and effort are reused). */
  baseRequest: () => ModelRequest;
  retain: number;
  reason: CompactionReason;
  summaryMaxTokens: number;
  where?: { turn?: number; step?: number };
  signal?: AbortSignal;
  /** Beyond DSH: the todo list and goal, appended after the checkpoint. */
  taskState?: () => Promise<TaskStateMessage | undefined>;
};

export function compactionLeaseName(sessionId: string): string {
  return `compaction:${sessionId}`;
}

/**
 * C9: runs `body` holding the `compaction:<id>` lease, renewed while it runs; undefined when busy. `signal`
 * aborts when the lock is lost (the body must stop: another compaction may start).
 */
export function withCompactionLock<T>(
  store: LeaseStore,
  sessionId: string,
  body: (signal: AbortSignal) => Promise<T>,
  ttlMs = 30_000,
): Promise<T | undefined> {
  return withLease(store, compactionLeaseName(sessionId), `compaction-${randomUUID()}`, ttlMs, body);
}

/** C9: a start with no end after it, found while we hold the lock, belongs to a dead process. */
export function closeStaleStart(log: CompactionLog, where: { turn?: number; step?: number } = {}): boolean {
  for (let i = log.events.length - 1; i >= 0; i--) {
    const event = log.events[i]!;
    if (event.type === "compaction/end") return false;
    if (event.type === "compaction/start") {
      log.add({
        type: "compaction/end",
        data: { ok: false, error: "stale start: the compacting process stopped before finishing" },
        ...where,
      });
      return true;
    }
  }
  return false;
}

function isCheckpointNode(node: SurfaceNode): boolean {
  return node.message.role === "user" && isCheckpointText(node.message.text);
}

/** C5 over the log's surface, with the meter's cached costs. */
export function rangeFor(log: CompactionLog, meter: TokenMeter, retain: number): CompactionRange | undefined {
  meter.measure(log);
  return selectRange(log.surface.surface, retain, (n) => meter.costOf(n), isCheckpointNode, meter.nodeTokens);
}

/** C6: the summary request — the session's request cut after the range, plus the instruction. */
export function summaryRequest(
  base: ModelRequest,
  nodes: readonly SurfaceNode[],
  range: CompactionRange,
  maxTokens: number,
  signal?: AbortSignal,
): ModelRequest {
  const from = nodes[0]?.message.role === "system" ? 1 : 0;
  const messages: SurfaceMessage[] = nodes.slice(from, range.end + 1).map((n) => n.message);
  messages.push({ role: "user", text: COMPACTION_INSTRUCTION });
  return {
    ...base,
    messages,
    maxTokens: Math.min(maxTokens, base.maxTokens ?? maxTokens),
    headers: { ...base.headers, "x-bdsh-purpose": "compaction" },
    ...(signal ? { signal } : {}),
  };
}

/** One attempt, inside the lock. Appends and flushes its own events. */
export async function compactOnce(options: CompactOnceOptions): Promise<CompactionOutcome> {
  const { log, meter } = options;
  const where = options.where ?? {};
  const range = rangeFor(log, meter, options.retain);
  if (!range) return { kind: "nothing" };
  const nodes = log.surface.surface;
  const covered = nodes.slice(range.start, range.end + 1).map((n) => n.seq);
  const base = options.baseRequest();
  log.add({ type: "compaction/start", data: { reason: options.reason }, ...where });
  await log.flush();
  const startedAt = log.seq;
  // M20: the summary request's tokens are recorded even when its summary is refused.
  let usage: Usage | undefined;
  const fail = async (error: string): Promise<CompactionOutcome> => {
    log.add({ type: "compaction/end", data: { ok: false, error, ...(usage ? { usage } : {}) }, ...where });
    await log.flush();
    return { kind: "failed", error };
  };
  let summary: string;
  try {
    const request = summaryRequest(base, nodes, range, options.summaryMaxTokens, options.signal);
    const reply = await collectReply(options.adapter.stream(Object.freeze(request)));
    usage = reply.usage;
    summary = reply.blocks
      .filter((b) => b.type === "text")
      .map((b) => b.text)
      .join("")
      .trim();
    if (reply.finish === "max-tokens") return await fail(SUMMARY_TRUNCATED);
  } catch (error) {
    if (error instanceof LlmError && error.code === "EMPTY_RESPONSE") return await fail(SUMMARY_EMPTY);
    return await fail(`summarization failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (summary === "") return await fail(SUMMARY_EMPTY);
  const text = checkpointText(summary);
  const tokensAfter = messageTokens({ role: "user", text });
  if (tokensAfter >= range.tokens) return await fail(SUMMARY_NOT_SMALLER);
  if (log.seq !== startedAt || log.surface.surface[range.end]?.seq !== range.endSeq) {
    return await fail(SURFACE_CHANGED);
  }
  const events: NewEvent[] = [
    {
      type: "compaction/summary",
      data: {
        text: summary,
        startSeq: range.startSeq,
        endSeq: range.endSeq,
        tokensBefore: range.tokens,
        tokensAfter,
        ...(usage ? { usage } : {}),
      },
      ...where,
    },
    {
      type: "user/message",
      data: {
        text,
        source: "compact-checkpoint",
        surfaceOp: { op: "replace", startSeq: range.startSeq, endSeq: range.endSeq },
        sourceEventSeqs: covered,
      },
      ...where,
    },
  ];
  log.add(...events);
  const state = await options.taskState?.().catch(() => undefined);
  if (state) {
    log.add({ type: "user/message", data: { text: state.text, source: "context-reinjection" }, ...where });
  }
  log.add({ type: "compaction/end", data: { ok: true, replaced: covered.length }, ...where });
  await log.flush();
  return { kind: "compacted", replaced: covered.length, tokensBefore: range.tokens, tokensAfter };
}
