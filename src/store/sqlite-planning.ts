/**
 * Goals and schedules on SQLite (P3, S8): the statements and the transactions behind the `Store` methods
 * of the same names (see planning-rows.ts for the invariants).
 *
 * Every write that reads first is one `BEGIN IMMEDIATE` transaction, so two processes on one file take
 * turns on the write lock: a compare-and-set or a claim sees the committed row and exactly one wins.
 */
import type Database from "better-sqlite3";
import {
  checkObjective,
  GoalExistsError,
  type GoalPatch,
  type GoalRecord,
  type GoalRow,
  type NewGoal,
  type NewSchedule,
  type SchedulePatch,
  type ScheduleRecord,
  type ScheduleRow,
  toGoal,
  toSchedule,
} from "./planning-rows.js";
import {
  checkLimit,
  DEFAULT_LIST_LIMIT,
  type InboxRecord,
  isoNow,
  newId,
  newInboxValues,
  toInboxItem,
} from "./rows.js";
import { type InboxItem, type NewInboxItem, type PlanningStore, SessionNotFoundError } from "./store.js";

const GOAL_COLUMNS =
  "id, session_id, revision, objective, phase, rounds_started, max_rounds, blocked_reason, created_at, updated_at";
const SCHEDULE_COLUMNS =
  "id, session_id, title, prompt, timing, next_at, last_occurrence_at, created_at, updated_at";
const INBOX_COLUMNS = "id, session_id, queue, mode, source, text, metadata, created_at";

const SQL = {
  sessionExists: "SELECT 1 FROM sessions WHERE id = ?",
  getGoal: `SELECT ${GOAL_COLUMNS} FROM goals WHERE session_id = ?`,
  deleteGoal: "DELETE FROM goals WHERE session_id = ?",
  insertGoal: `INSERT INTO goals (id, session_id, revision, objective, phase, rounds_started, max_rounds, created_at, updated_at)
       VALUES (@id, @sessionId, 1, @objective, 'active', 0, @maxRounds, @now, @now) RETURNING ${GOAL_COLUMNS}`,
  updateGoal: `UPDATE goals SET
         objective = coalesce(@objective, objective),
         phase = coalesce(@phase, phase),
         blocked_reason = CASE WHEN @setReason = 1 THEN @reason ELSE blocked_reason END,
         revision = revision + 1,
         updated_at = @now
       WHERE session_id = @sessionId AND id = @id AND revision = @revision RETURNING ${GOAL_COLUMNS}`,
  claimRound: `UPDATE goals SET rounds_started = @round, revision = revision + 1, updated_at = @now
       WHERE session_id = @sessionId AND id = @id AND phase = 'active'
         AND rounds_started = @round - 1 AND @round <= max_rounds RETURNING ${GOAL_COLUMNS}`,
  insertInbox: `INSERT INTO inbox (id, session_id, queue, mode, source, text, metadata, created_at)
       VALUES (@id, @sessionId, @queue, @mode, @source, @text, @metadata, @now) RETURNING ${INBOX_COLUMNS}`,
  insertSchedule: `INSERT INTO schedules (id, session_id, title, prompt, timing, next_at, created_at, updated_at)
       VALUES (@id, @sessionId, @title, @prompt, @timing, @nextAt, @now, @now) RETURNING ${SCHEDULE_COLUMNS}`,
  getSchedule: `SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE id = ?`,
  listSchedules: `SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE session_id = ? ORDER BY id`,
  updateSchedule: `UPDATE schedules SET
         title = coalesce(@title, title),
         prompt = coalesce(@prompt, prompt),
         timing = coalesce(@timing, timing),
         next_at = CASE WHEN @setNext = 1 THEN @nextAt ELSE next_at END,
         updated_at = @now
       WHERE id = @id RETURNING ${SCHEDULE_COLUMNS}`,
  deleteSchedule: "DELETE FROM schedules WHERE id = ?",
  dueSchedules: `SELECT ${SCHEDULE_COLUMNS} FROM schedules
       WHERE next_at IS NOT NULL AND next_at <= ? ORDER BY next_at, id LIMIT ?`,
  claimOccurrence: `UPDATE schedules SET next_at = @nextAt, last_occurrence_at = @occurrenceAt, updated_at = @now
       WHERE id = @id AND next_at = @expectedNextAt RETURNING session_id`,
} as const;

type Statements = { readonly [K in keyof typeof SQL]: Database.Statement };

export class SqlitePlanning implements PlanningStore {
  private prepared: Statements | undefined;

  constructor(
    private readonly db: Database.Database,
    /** Announces an inbox change (the store's notification hub). */
    private readonly inboxChanged: (sessionId: string) => void,
  ) {}

  async createGoal(sessionId: string, goal: NewGoal): Promise<GoalRow> {
    checkObjective(goal.objective);
    const create = this.db.transaction(() => {
      if (!this.s.sessionExists.get(sessionId)) throw new SessionNotFoundError(sessionId);
      const existing = this.s.getGoal.get(sessionId) as GoalRecord | undefined;
      if (existing && existing.phase !== "complete") throw new GoalExistsError(sessionId);
      if (existing) this.s.deleteGoal.run(sessionId);
      const values = { id: newId(), sessionId, objective: goal.objective, maxRounds: goal.maxRounds };
      return this.s.insertGoal.get({ ...values, now: isoNow() }) as GoalRecord;
    });
    return toGoal(create.immediate());
  }

  async getGoal(sessionId: string): Promise<GoalRow | undefined> {
    const row = this.s.getGoal.get(sessionId) as GoalRecord | undefined;
    return row && toGoal(row);
  }

  async updateGoal(
    sessionId: string,
    expected: { id: string; revision: number },
    patch: GoalPatch,
  ): Promise<GoalRow | undefined> {
    if (patch.objective !== undefined) checkObjective(patch.objective);
    const row = this.s.updateGoal.get({
      sessionId,
      id: expected.id,
      revision: expected.revision,
      objective: patch.objective ?? null,
      phase: patch.phase ?? null,
      setReason: patch.blockedReason !== undefined ? 1 : 0,
      reason: patch.blockedReason ?? null,
      now: isoNow(),
    }) as GoalRecord | undefined;
    return row && toGoal(row);
  }

  async deleteGoal(sessionId: string): Promise<boolean> {
    return this.s.deleteGoal.run(sessionId).changes > 0;
  }

  async claimGoalRound(
    sessionId: string,
    expected: { id: string; round: number },
    item: NewInboxItem,
  ): Promise<{ goal: GoalRow; item: InboxItem } | undefined> {
    const claim = this.db.transaction(() => {
      const now = isoNow();
      const goal = this.s.claimRound.get({ sessionId, id: expected.id, round: expected.round, now }) as
        | GoalRecord
        | undefined;
      if (!goal) return undefined;
      const queued = this.s.insertInbox.get({ ...newInboxValues(item), sessionId, now }) as InboxRecord;
      return { goal: toGoal(goal), item: toInboxItem(queued) };
    });
    const claimed = claim.immediate();
    if (claimed) this.inboxChanged(sessionId);
    return claimed;
  }

  async createSchedule(sessionId: string, schedule: NewSchedule): Promise<ScheduleRow> {
    if (!this.s.sessionExists.get(sessionId)) throw new SessionNotFoundError(sessionId);
    const row = this.s.insertSchedule.get({
      id: newId(),
      sessionId,
      title: schedule.title,
      prompt: schedule.prompt,
      timing: JSON.stringify(schedule.timing),
      nextAt: schedule.nextAt,
      now: isoNow(),
    }) as ScheduleRecord;
    return toSchedule(row);
  }

  async getSchedule(id: string): Promise<ScheduleRow | undefined> {
    const row = this.s.getSchedule.get(id) as ScheduleRecord | undefined;
    return row && toSchedule(row);
  }

  async listSchedules(sessionId: string): Promise<ScheduleRow[]> {
    return (this.s.listSchedules.all(sessionId) as ScheduleRecord[]).map(toSchedule);
  }

  async updateSchedule(id: string, patch: SchedulePatch): Promise<ScheduleRow | undefined> {
    const row = this.s.updateSchedule.get({
      id,
      title: patch.title ?? null,
      prompt: patch.prompt ?? null,
      timing: patch.timing === undefined ? null : JSON.stringify(patch.timing),
      setNext: patch.nextAt !== undefined ? 1 : 0,
      nextAt: patch.nextAt ?? null,
      now: isoNow(),
    }) as ScheduleRecord | undefined;
    return row && toSchedule(row);
  }

  async deleteSchedule(id: string): Promise<boolean> {
    return this.s.deleteSchedule.run(id).changes > 0;
  }

  async dueSchedules(nowMs: number, limit = DEFAULT_LIST_LIMIT): Promise<ScheduleRow[]> {
    checkLimit(limit);
    return (this.s.dueSchedules.all(nowMs, limit) as ScheduleRecord[]).map(toSchedule);
  }

  async claimScheduleOccurrence(
    id: string,
    claim: { expectedNextAt: number; occurrenceAt: number; nextAt: number | null },
    item: NewInboxItem,
  ): Promise<InboxItem | undefined> {
    const run = this.db.transaction(() => {
      const now = isoNow();
      const sessionId = this.s.claimOccurrence.pluck().get({ id, ...claim, now }) as string | undefined;
      if (sessionId === undefined) return undefined;
      return toInboxItem(this.s.insertInbox.get({ ...newInboxValues(item), sessionId, now }) as InboxRecord);
    });
    const queued = run.immediate();
    if (queued) this.inboxChanged(queued.sessionId);
    return queued;
  }

  /** Prepared on first use: the tables exist only after `migrate()`. */
  private get s(): Statements {
    if (!this.prepared) {
      const prepared: Partial<Record<keyof typeof SQL, Database.Statement>> = {};
      for (const key of Object.keys(SQL) as (keyof typeof SQL)[]) prepared[key] = this.db.prepare(SQL[key]);
      this.prepared = prepared as Statements;
    }
    return this.prepared;
  }
}
