/**
 * Compaction as a plugin (C4, C10, C11): checked before every step, used to recover from a context
 * overflow, and offered as the `compaction` service for `/compact` and `bdsh compact ID`.
 *
 * - C4, `agent/pre-step`: below the threshold nothing happens. Above it: prune (C12), measure again, then
 *   up to `retries + 1` summarise attempts with the retain budget. Any failure is logged
 *   (`step compaction failed: …; continuing the turn`) and the step's request goes out over budget.
 * - C10, `agent/request-error`: an overflow (the code, the seed's wording, M17) prunes and compacts with
 *   retain 0 — only the last balanced unit is kept — and retries once when the surface changed
 *   (`replaceGeneration` advanced; pruning alone counts). Otherwise the original error stands. The counter
 *   resets on a new assistant message and when the agent goes idle.
 * - C11, the service: human only, while idle (the session lease must be free), retain 0.
 * - Every compaction holds the `compaction:<id>` store lease (C9, ./engine.ts).
 *
 * Model experience: ./texts.ts (checkpoint, instruction, prune marker) and ./reinjection.ts.
 */
import { TokenMeter } from "../../log/token-meter.js";
import type { Plugin, PluginContext } from "../../loop/plugin.js";
import { isContextOverflow } from "../../model/errors.js";
import type { LlmError, ModelRequest } from "../../model/types.js";
import { todosFromLog } from "../../tools/todo/todos-from-log.js";
import { type CompactionSettings, compactionBudget, DEFAULT_COMPACTION } from "./budget.js";
import {
  type CompactionOutcome,
  type CompactionReason,
  closeStaleStart,
  compactOnce,
  type TaskStateMessage,
  withCompactionLock,
} from "./engine.js";
import { type CompactionLog, pruneToolResults } from "./pruner.js";
import { taskStateText } from "./reinjection.js";
import {
  COMPACTION_BUSY,
  compactedMessage,
  compactionFailedMessage,
  NOTHING_TO_COMPACT,
  OVERFLOW_UNRECOVERED,
  stepCompactionFailed,
  stillAboveThreshold,
} from "./texts.js";

export type ManualCompaction = { kind: "compacted" | "nothing" | "busy" | "failed"; message: string };

/** C11: `/compact` in chat and `bdsh compact ID` call this. */
export interface CompactionService {
  compactNow(signal?: AbortSignal): Promise<ManualCompaction>;
}

declare module "../../loop/plugin.js" {
  interface PluginApiMap {
    compaction: CompactionService;
  }
}

type Where = { turn?: number; step?: number };

export function isOverflowError(error: LlmError): boolean {
  return error.code === "CONTEXT_WINDOW_EXCEEDED" || isContextOverflow(error.message);
}

export function compactionPlugin(overrides: Partial<CompactionSettings> = {}): Plugin {
  const settings = { ...DEFAULT_COMPACTION, ...overrides };
  return {
    name: "compaction",
    needs: ["leases"], // C9: the compaction lock
    uses: ["goals"], // the task state carried over a checkpoint names the active goal
    setup: (ctx) => new Compactor(ctx, settings).install(),
  };
}

class Compactor {
  private readonly meter = new TokenMeter();
  private overflowRetries = 0;

  constructor(
    private readonly ctx: PluginContext,
    private readonly settings: CompactionSettings,
  ) {}

  install(): void {
    const { ctx } = this;
    ctx.hooks.onWaterfall(
      "agent/pre-step",
      async (state) => {
        if (state.reject || !this.settings.auto) return state;
        await this.onPressure({ turn: state.turn });
        return state;
      },
      { plugin: "compaction" },
    );
    ctx.hooks.onWaterfall(
      "agent/request-error",
      async (state) => {
        if (state.decision.kind === "retry" || !isOverflowError(state.error)) return state;
        if (this.overflowRetries >= this.settings.maxOverflowRetries) return state;
        this.overflowRetries++;
        const before = ctx.log.surface.replaceGeneration;
        await this.recoverOverflow({ turn: state.turn, step: state.step });
        if (ctx.log.surface.replaceGeneration === before) {
          ctx.log.add({
            type: "agent/error",
            data: { code: "CONTEXT_WINDOW_EXCEEDED", message: OVERFLOW_UNRECOVERED, plugin: "compaction" },
            turn: state.turn,
            step: state.step,
          });
          return state;
        }
        return { ...state, decision: { kind: "retry", delayMs: 0 } };
      },
      { plugin: "compaction" },
    );
    ctx.hooks.onSerial("agent/status", (event) => {
      if (event.status === "idle") this.overflowRetries = 0;
    });
    ctx.log.onEvents((events) => {
      if (events.some((e) => e.type === "assistant/message")) this.overflowRetries = 0;
    });
    ctx.provide("compaction", { compactNow: (signal) => this.compactNow(signal) });
  }

  private budget() {
    return compactionBudget(this.ctx.model.contextWindow, this.ctx.model.maxOutputTokens, this.settings);
  }

  private measure(log: CompactionLog): number {
    return this.meter.measure(log, this.ctx.currentTools()).totalTokens;
  }

  /** C4. Failures are logged; the turn continues. */
  private async onPressure(where: Where): Promise<void> {
    const { ctx } = this;
    const { threshold, retain } = this.budget();
    const before = this.measure(ctx.log);
    if (before < threshold) return;
    try {
      // Busy (undefined): another process holds the lock and is compacting this session right now.
      // The agent drives (it holds the session lease and its appends are fenced); the lock only keeps a
      // second compaction of this session from running beside this one.
      await withCompactionLock(ctx.capability("leases"), ctx.sessionId, async () => {
        if (closeStaleStart(ctx.log, where)) await ctx.log.flush();
        if (pruneToolResults(ctx.log, where) > 0) {
          await ctx.log.flush();
          if (this.measure(ctx.log) < threshold) return;
        }
        // Above the window itself the last reply's usage says the next request would overflow (C10).
        const hard = this.measure(ctx.log) >= ctx.model.contextWindow;
        const attempts = this.settings.retries + 1;
        let last: CompactionOutcome | undefined;
        for (let attempt = 1; attempt <= attempts; attempt++) {
          last = await this.compact(ctx.log, hard ? 0 : retain, hard ? "overflow" : "pressure", where);
          if (last.kind === "nothing") break;
          if (this.measure(ctx.log) < threshold) return;
        }
        const tokens = this.measure(ctx.log);
        const reason =
          last?.kind === "failed" ? last.error : stillAboveThreshold(attempts, tokens, threshold);
        throw new Error(reason);
      });
    } catch (error) {
      const message = stepCompactionFailed(error instanceof Error ? error.message : String(error));
      ctx.log.add({
        type: "agent/error",
        data: { code: "COMPACTION_FAILED", message, plugin: "compaction" },
        ...where,
      });
      await ctx.log.flush().catch(() => undefined);
    }
  }

  /** C10: prune, then compact keeping only the last balanced unit. */
  private async recoverOverflow(where: Where): Promise<void> {
    const { ctx } = this;
    try {
      await withCompactionLock(ctx.capability("leases"), ctx.sessionId, async () => {
        if (closeStaleStart(ctx.log, where)) await ctx.log.flush();
        if (pruneToolResults(ctx.log, where) > 0) await ctx.log.flush();
        await this.compact(ctx.log, 0, "overflow", where);
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      ctx.log.add({
        type: "agent/error",
        data: { code: "COMPACTION_FAILED", message, plugin: "compaction" },
        ...where,
      });
    }
  }

  private compact(
    log: CompactionLog,
    retain: number,
    reason: CompactionReason,
    where: Where,
    baseRequest: () => ModelRequest = () => this.ctx.currentRequest(),
  ): Promise<CompactionOutcome> {
    return compactOnce({
      log,
      adapter: this.ctx.adapter,
      meter: this.meter,
      baseRequest,
      retain,
      reason,
      summaryMaxTokens: this.settings.summaryMaxTokens,
      where,
      taskState: () => this.taskState(log),
    });
  }

  private async taskState(log: CompactionLog): Promise<TaskStateMessage | undefined> {
    const goal = await this.ctx.use("goals")?.active();
    const text = taskStateText(todosFromLog(log.events), goal);
    return text === undefined ? undefined : { text };
  }

  /**
   * C11: while idle only. The agent's exclusive section holds the session lease for the duration, so no
   * turn starts meanwhile, and its log is read up to date first; losing the lease, the compaction lock or
   * the caller's signal stops the summary request.
   */
  private async compactNow(signal?: AbortSignal): Promise<ManualCompaction> {
    const { ctx } = this;
    const busy: ManualCompaction = { kind: "busy", message: COMPACTION_BUSY };
    try {
      const result = await ctx.exclusive(
        (log, leaseLost) =>
          withCompactionLock(ctx.capability("leases"), ctx.sessionId, (lockLost) =>
            this.compactManually(log, AbortSignal.any([lockLost, leaseLost, ...(signal ? [signal] : [])])),
          ),
        { ttlMs: 60_000 },
      );
      return result ?? busy;
    } catch (error) {
      if ((error as { code?: unknown }).code === "SESSION_BUSY") return busy;
      throw error;
    }
  }

  private async compactManually(log: PluginContext["log"], stop: AbortSignal): Promise<ManualCompaction> {
    if (closeStaleStart(log)) await log.flush();
    const meter = new TokenMeter();
    const tokensBefore = meter.measure(log).surfaceTokens;
    const outcome = await compactOnce({
      log,
      adapter: this.ctx.adapter,
      meter,
      baseRequest: () => manualBase(this.ctx),
      retain: 0,
      reason: "manual",
      summaryMaxTokens: this.settings.summaryMaxTokens,
      signal: stop,
      taskState: () => this.taskState(log),
    });
    switch (outcome.kind) {
      case "nothing":
        return { kind: "nothing", message: NOTHING_TO_COMPACT };
      case "failed":
        return { kind: "failed", message: compactionFailedMessage(outcome.error) };
      default: {
        const saved = Math.max(0, tokensBefore - meter.measure(log).surfaceTokens);
        return { kind: "compacted", message: compactedMessage(outcome.replaced, saved) };
      }
    }
  }
}

/** The manual call's prefix: the agent's request shape, with the system prompt of the log just read. */
function manualBase(ctx: PluginContext): ModelRequest {
  const request = ctx.currentRequest();
  const head = ctx.log.surface.surface[0]?.message;
  const tools = request.tools.length > 0 ? request.tools : ctx.tools.declarations();
  return { ...request, system: head?.role === "system" ? head.text : request.system, tools };
}
