/**
 * The agent of the standard preset, with the operations people start from outside a turn: compaction now
 * (`/compact`, `bdsh compact`), a goal command (`/goal …`, `POST /v1/sessions/:id/goal`) and plan mode.
 * The CLI and the server call these methods; the plugins behind them (compaction, goals, plan mode) are
 * the preset's own (./standard.ts), so this is the one place that knows where each one is.
 *
 * Invariants:
 * - An operation whose plugin the agent was not given fails with `FeatureMissingError` (code
 *   `NO_<FEATURE>`), never with a lookup error; nothing is written then.
 * - Writes go through the agent's own log under the session lease (the plugins use `Agent.exclusive`).
 */
import type { CompactionService, ManualCompaction } from "../context/compaction/plugin.js";
import { Agent } from "../loop/agent.js";
import { type GoalCommand, runGoalCommand } from "../planning/goal-command.js";
import type { PlanModeService } from "../planning/plan-mode.js";

/** The agent has no plugin for the operation asked of it (a product's own preset left it out). */
export class FeatureMissingError extends Error {
  constructor(
    readonly code: "NO_COMPACTION" | "NO_GOALS",
    message: string,
  ) {
    super(message);
    this.name = "FeatureMissingError";
  }
}

export class StandardAgent extends Agent {
  /** C9: summarise the session now, outside a turn. */
  compactNow(signal?: AbortSignal): Promise<ManualCompaction> {
    return this.compaction().compactNow(signal);
  }

  /**
   * One person's goal command; create and resume queue the first round, and `kick` starts whoever drives
   * the session (this agent, or the server's runner). Returns the line to show.
   */
  goalCommand(command: GoalCommand, kick: () => void): Promise<string> {
    const goals = this.api("goalService");
    const rounds = this.api("goalRounds");
    if (!goals || !rounds) throw new FeatureMissingError("NO_GOALS", "this agent has no goal plugin");
    return runGoalCommand(command, {
      goals,
      queueRound: () => rounds.queueRound(),
      commit: () => rounds.commit(),
      kick,
      idle: this.status === "idle",
    });
  }

  /** T9: a background job of this session runs in this process (its agent must stay open here). */
  hasRunningJobs(): boolean {
    const jobs = this.services.get("jobs");
    return jobs?.list(this.sessionId).some((job) => job.state === "running") ?? false;
  }

  /** Plan mode, when the preset installed it. */
  get planMode(): PlanModeService | undefined {
    return this.api("planMode");
  }

  private compaction(): CompactionService {
    const compaction = this.api("compaction");
    if (!compaction) throw new FeatureMissingError("NO_COMPACTION", "this agent has no compaction plugin");
    return compaction;
  }
}
