/**
 * The goal service (P3, P5): one per agent, over the session's goal row.
 *
 * Invariants:
 * - The row is the truth (phase, revision, rounds); every change is a compare-and-set on `{id, revision}`,
 *   retried on a fresh read, so two writers never lose an update.
 * - Armed/disarmed is in the log, as `goal/armed` events folded on load: an agent that opens the session on
 *   another server (a graceful stop, a rolling restart) finds the goal as it was. Only `create` (the user's
 *   request, `--goal`, `/goal`) or the user's `resume` arms it; a person's abort pauses it, and a crash repair
 *   disarms it (R2), each written as an event.
 * - The model cannot resume a paused goal; `blocked` is refused before `blockedMinRounds` rounds.
 * - Changes are recorded as `goal/updated` events by the goal plugin at its next hook (only hooks write
 *   the log); wrap-up notices go to the durable next-step inbox (`goal-wrapup`).
 *
 * Exposed on `ctx.services` as `goalService`, and as `goals` for the compaction plugin, which re-injects
 * `active()` after a checkpoint.
 */
import type { GoalSnapshot, NewEvent, UserSource } from "../log/events.js";
import type { GoalPatch, GoalRow } from "../store/planning-rows.js";
import type { PlanningStore } from "../store/store.js";
import { ToolRefusal } from "../tools/refusal.js";
import {
  blockedTooEarlyText,
  GOAL_CHANGED,
  goalBlockedText,
  goalCompleteText,
  NO_GOAL,
  RESUME_BY_USER_ONLY,
  ROUND_LIMIT_REASON,
} from "./goal-texts.js";

export type GoalAction = "edit" | "pause" | "resume" | "complete" | "blocked";
export type GoalActor = "model" | "user";

/** A refused update: the text is what the model (or the user) is told. */
export class GoalRefusal extends ToolRefusal {
  override name = "GoalRefusal";
}

export type GoalServiceOptions = {
  /** Only the goals part of the store. */
  goals: PlanningStore;
  sessionId: string;
  maxRounds: number;
  blockedMinRounds: number;
  /** Queues a wrap-up notice for the next step. */
  notify(text: string, source: UserSource): Promise<unknown>;
  /** Whether the running turn holds direct human input (P5: create_goal needs it). */
  humanInputThisTurn(): boolean;
};

export interface GoalsService {
  /** The goal while its phase is `active` (armed or not). */
  active(): Promise<GoalRow | undefined>;
  get(): Promise<GoalRow | undefined>;
  readonly armed: boolean;
}

declare module "../log/events.js" {
  interface PluginEventDataMap {
    /** The goal's rounds go on by themselves (`armed`) or wait for a person; `reason`: what changed it. */
    "goal/armed": { armed: boolean; reason: string };
  }
}

declare module "../tools/types.js" {
  interface ToolServiceMap {
    /** What the goal tools call. */
    goalService: GoalService;
  }
}

declare module "../loop/plugin.js" {
  interface PluginApiMap {
    /** The full service; `goals` (declared by the compaction re-injection) is the same object, read-only. */
    goalService: GoalService;
  }
}

export class GoalService implements GoalsService {
  private isArmed = false;
  private readonly records: NewEvent[] = [];

  constructor(private readonly options: GoalServiceOptions) {}

  get armed(): boolean {
    return this.isArmed;
  }

  get maxRounds(): number {
    return this.options.maxRounds;
  }

  async get(): Promise<GoalRow | undefined> {
    return this.options.goals.getGoal(this.options.sessionId);
  }

  async active(): Promise<GoalRow | undefined> {
    const goal = await this.get();
    return goal?.phase === "active" ? goal : undefined;
  }

  /** Creates the goal (replacing a complete one) and arms it. */
  async create(objective: string): Promise<GoalRow> {
    const goal = await this.options.goals.createGoal(this.options.sessionId, {
      objective: objective.trim(),
      maxRounds: this.options.maxRounds,
    });
    this.setArmed(true, "create");
    this.record(goal, "create");
    return goal;
  }

  humanInputThisTurn(): boolean {
    return this.options.humanInputThisTurn();
  }

  arm(reason = "arm"): void {
    this.setArmed(true, reason);
  }

  disarm(reason = "disarm"): void {
    this.setArmed(false, reason);
  }

  /** The fold of a `goal/armed` event (this agent's own or one read from the log). */
  applyArmed(armed: boolean): void {
    this.isArmed = armed;
  }

  private setArmed(armed: boolean, reason: string): void {
    if (armed === this.isArmed) return;
    this.isArmed = armed;
    this.records.push({ type: "goal/armed", data: { armed, reason } });
  }

  /** Applies an action with compare-and-set. Throws GoalRefusal with the text to show. */
  async update(
    action: GoalAction,
    by: GoalActor,
    details: { objective?: string; reason?: string } = {},
  ): Promise<GoalRow> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const goal = await this.get();
      if (!goal) throw new GoalRefusal("NO_GOAL", NO_GOAL);
      const patch = this.patchFor(action, by, goal, details);
      const updated = await this.options.goals.updateGoal(this.options.sessionId, goal, patch);
      if (!updated) continue;
      await this.afterUpdate(action, updated);
      return updated;
    }
    throw new GoalRefusal("GOAL_CHANGED", GOAL_CHANGED);
  }

  /** P4: the round cap was reached: blocked `round-limit`. */
  async blockAtLimit(goal: GoalRow, reason: string): Promise<GoalRow | undefined> {
    const updated = await this.options.goals.updateGoal(this.options.sessionId, goal, {
      phase: "blocked",
      blockedReason: reason,
    });
    this.setArmed(false, ROUND_LIMIT_REASON);
    if (updated) this.record(updated, ROUND_LIMIT_REASON);
    return updated;
  }

  /** P4: an abort pauses the goal (and disarms). */
  async pauseAfterAbort(): Promise<void> {
    this.setArmed(false, "pause-on-abort");
    const goal = await this.active();
    if (!goal) return;
    const updated = await this.options.goals.updateGoal(this.options.sessionId, goal, { phase: "paused" });
    if (updated) this.record(updated, "pause-on-abort");
  }

  async clear(): Promise<boolean> {
    this.setArmed(false, "clear");
    return this.options.goals.deleteGoal(this.options.sessionId);
  }

  record(goal: GoalSnapshot, action: string): void {
    this.records.push({ type: "goal/updated", data: { goal: snapshotOf(goal), action } });
  }

  recordRound(round: number, maxRounds: number): void {
    this.records.push({ type: "goal/round", data: { round, maxRounds } });
  }

  /** `goal/updated`, `goal/round` and `goal/armed` events not yet written to the log, oldest first. */
  takeRecords(): NewEvent[] {
    return this.records.splice(0);
  }

  private patchFor(
    action: GoalAction,
    by: GoalActor,
    goal: GoalRow,
    details: { objective?: string; reason?: string },
  ): GoalPatch {
    switch (action) {
      case "edit": {
        const objective = details.objective?.trim();
        if (!objective) throw new GoalRefusal("INVALID_INPUT", "edit needs a non-empty objective");
        return { objective };
      }
      case "pause":
        return { phase: "paused" };
      case "resume":
        if (by === "model") throw new GoalRefusal("RESUME_BY_USER_ONLY", RESUME_BY_USER_ONLY);
        return { phase: "active", blockedReason: null };
      case "complete":
        return { phase: "complete" };
      case "blocked": {
        // P5: deliberately refuses early give-ups.
        if (by === "model" && goal.roundsStarted < this.options.blockedMinRounds) {
          throw new GoalRefusal(
            "BLOCKED_TOO_EARLY",
            blockedTooEarlyText(this.options.blockedMinRounds, goal.roundsStarted),
          );
        }
        const reason = details.reason?.trim();
        if (!reason) throw new GoalRefusal("INVALID_INPUT", "blocked needs a reason");
        return { phase: "blocked", blockedReason: reason };
      }
    }
  }

  private async afterUpdate(action: GoalAction, goal: GoalRow): Promise<void> {
    this.record(goal, action);
    if (action === "resume") this.setArmed(true, action);
    if (action === "pause") this.setArmed(false, action);
    if (action === "complete" || action === "blocked") {
      this.setArmed(false, action);
      const text =
        action === "complete"
          ? goalCompleteText(goal.objective)
          : goalBlockedText(goal.objective, goal.blockedReason ?? "");
      await this.options.notify(text, "goal-wrapup"); // durable before the tool answers
    }
  }
}

export function snapshotOf(goal: GoalSnapshot): GoalSnapshot {
  return {
    id: goal.id,
    revision: goal.revision,
    objective: goal.objective,
    phase: goal.phase,
    roundsStarted: goal.roundsStarted,
    maxRounds: goal.maxRounds,
    ...(goal.blockedReason ? { blockedReason: goal.blockedReason } : {}),
  };
}
