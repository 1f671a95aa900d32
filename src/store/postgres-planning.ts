/**
 * Goals and schedules on PostgreSQL (P3, S8): one statement, one round trip, per `Store` method (see
 * planning-rows.ts for the invariants).
 *
 * The claims are single conditional UPDATEs with the inbox INSERT in a data-modifying CTE: a concurrent
 * claim of the same round or occurrence waits on the row lock, re-checks its condition against the
 * committed row (READ COMMITTED re-evaluation) and matches nothing. `pg_notify` is delivered at commit.
 */
import type pg from "pg";
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
import { INBOX_CHANNEL } from "./postgres-statements.js";
import {
  checkLimit,
  DEFAULT_LIST_LIMIT,
  type InboxRecord,
  newId,
  newInboxValues,
  toInboxItem,
} from "./rows.js";
import { type InboxItem, type NewInboxItem, type PlanningStore, SessionNotFoundError } from "./store.js";

const GOAL_COLUMNS =
  "id, session_id, revision::float8 AS revision, objective, phase, rounds_started, max_rounds, blocked_reason, created_at, updated_at";
const SCHEDULE_COLUMNS =
  "id, session_id, title, prompt, timing, next_at::float8 AS next_at, last_occurrence_at::float8 AS last_occurrence_at, created_at, updated_at";
const INBOX_COLUMNS = "id, session_id, queue, mode, source, text, metadata, created_at";
/** The queued item's columns, prefixed so they do not clash with the claimed row's. */
const QUEUED =
  "i.id AS i_id, i.session_id AS i_session_id, i.queue AS i_queue, i.mode AS i_mode, i.source AS i_source, i.text AS i_text, i.metadata AS i_metadata, i.created_at AS i_created_at";

const SQL = {
  /** Inserts, or replaces a complete goal in place (a new id, revision 1); an open goal is left alone. */
  createGoal: `
    INSERT INTO goals AS g (id, session_id, revision, objective, phase, rounds_started, max_rounds)
    SELECT $1, id, 1, $3, 'active', 0, $4 FROM sessions WHERE id = $2
    ON CONFLICT (session_id) DO UPDATE SET
      id = EXCLUDED.id, revision = 1, objective = EXCLUDED.objective, phase = 'active', rounds_started = 0,
      max_rounds = EXCLUDED.max_rounds, blocked_reason = NULL, created_at = now(), updated_at = now()
    WHERE g.phase = 'complete'
    RETURNING ${GOAL_COLUMNS}`,
  sessionExists: "SELECT 1 FROM sessions WHERE id = $1",
  getGoal: { name: "bdsh_get_goal", text: `SELECT ${GOAL_COLUMNS} FROM goals WHERE session_id = $1` },
  updateGoal: `
    UPDATE goals SET
      objective = coalesce($4, objective),
      phase = coalesce($5, phase),
      blocked_reason = CASE WHEN $6::boolean THEN $7 ELSE blocked_reason END,
      revision = revision + 1,
      updated_at = now()
    WHERE session_id = $1 AND id = $2 AND revision = $3 RETURNING ${GOAL_COLUMNS}`,
  deleteGoal: "DELETE FROM goals WHERE session_id = $1",
  /** $1 session, $2 goal id, $3 round, $4… the inbox item. */
  claimRound: {
    name: "bdsh_claim_goal_round",
    text: `
      WITH g AS (
        UPDATE goals SET rounds_started = $3, revision = revision + 1, updated_at = now()
        WHERE session_id = $1 AND id = $2 AND phase = 'active' AND rounds_started = $3::int - 1 AND $3 <= max_rounds
        RETURNING ${GOAL_COLUMNS}
      ), i AS (
        INSERT INTO inbox (id, session_id, queue, mode, source, text, metadata)
        SELECT $4, g.session_id, $5, $6, $7, $8, $9 FROM g RETURNING ${INBOX_COLUMNS}
      )
      SELECT g.*, ${QUEUED}, pg_notify('${INBOX_CHANNEL}', g.session_id) FROM g, i`,
  },
  insertSchedule: `
    INSERT INTO schedules (id, session_id, title, prompt, timing, next_at)
    SELECT $1, id, $3, $4, $5, $6 FROM sessions WHERE id = $2 RETURNING ${SCHEDULE_COLUMNS}`,
  getSchedule: `SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE id = $1`,
  listSchedules: `SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE session_id = $1 ORDER BY id`,
  updateSchedule: `
    UPDATE schedules SET
      title = coalesce($2, title),
      prompt = coalesce($3, prompt),
      timing = coalesce($4, timing),
      next_at = CASE WHEN $5::boolean THEN $6::bigint ELSE next_at END,
      updated_at = now()
    WHERE id = $1 RETURNING ${SCHEDULE_COLUMNS}`,
  deleteSchedule: "DELETE FROM schedules WHERE id = $1",
  dueSchedules: {
    name: "bdsh_due_schedules",
    text: `SELECT ${SCHEDULE_COLUMNS} FROM schedules
           WHERE next_at IS NOT NULL AND next_at <= $1 ORDER BY next_at, id LIMIT $2`,
  },
  /** $1 id, $2 expected next, $3 occurrence, $4 new next, $5… the inbox item. */
  claimOccurrence: {
    name: "bdsh_claim_occurrence",
    text: `
      WITH c AS (
        UPDATE schedules SET next_at = $4, last_occurrence_at = $3, updated_at = now()
        WHERE id = $1 AND next_at = $2 RETURNING session_id
      ), i AS (
        INSERT INTO inbox (id, session_id, queue, mode, source, text, metadata)
        SELECT $5, c.session_id, $6, $7, $8, $9, $10 FROM c RETURNING ${INBOX_COLUMNS}
      )
      SELECT i.*, pg_notify('${INBOX_CHANNEL}', i.session_id) FROM i`,
  },
} as const;

type QueuedRecord = { [K in keyof InboxRecord as `i_${K}`]: InboxRecord[K] };

export class PostgresPlanning implements PlanningStore {
  constructor(private readonly pool: pg.Pool) {}

  async createGoal(sessionId: string, goal: NewGoal): Promise<GoalRow> {
    checkObjective(goal.objective);
    const { rows } = await this.pool.query<GoalRecord>(SQL.createGoal, [
      newId(),
      sessionId,
      goal.objective,
      goal.maxRounds,
    ]);
    if (rows[0]) return toGoal(rows[0]);
    const exists = await this.pool.query(SQL.sessionExists, [sessionId]);
    if (exists.rowCount === 0) throw new SessionNotFoundError(sessionId);
    throw new GoalExistsError(sessionId);
  }

  async getGoal(sessionId: string): Promise<GoalRow | undefined> {
    const { rows } = await this.pool.query<GoalRecord>({ ...SQL.getGoal, values: [sessionId] });
    return rows[0] && toGoal(rows[0]);
  }

  async updateGoal(
    sessionId: string,
    expected: { id: string; revision: number },
    patch: GoalPatch,
  ): Promise<GoalRow | undefined> {
    if (patch.objective !== undefined) checkObjective(patch.objective);
    const { rows } = await this.pool.query<GoalRecord>(SQL.updateGoal, [
      sessionId,
      expected.id,
      expected.revision,
      patch.objective ?? null,
      patch.phase ?? null,
      patch.blockedReason !== undefined,
      patch.blockedReason ?? null,
    ]);
    return rows[0] && toGoal(rows[0]);
  }

  async deleteGoal(sessionId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(SQL.deleteGoal, [sessionId]);
    return (rowCount ?? 0) > 0;
  }

  async claimGoalRound(
    sessionId: string,
    expected: { id: string; round: number },
    item: NewInboxItem,
  ): Promise<{ goal: GoalRow; item: InboxItem } | undefined> {
    const v = newInboxValues(item);
    const { rows } = await this.pool.query<GoalRecord & QueuedRecord>({
      ...SQL.claimRound,
      values: [sessionId, expected.id, expected.round, v.id, v.queue, v.mode, v.source, v.text, v.metadata],
    });
    const row = rows[0];
    if (!row) return undefined;
    const queued: InboxRecord = {
      id: row.i_id,
      session_id: row.i_session_id,
      queue: row.i_queue,
      mode: row.i_mode,
      source: row.i_source,
      text: row.i_text,
      metadata: row.i_metadata,
      created_at: row.i_created_at,
    };
    return { goal: toGoal(row), item: toInboxItem(queued) };
  }

  async createSchedule(sessionId: string, schedule: NewSchedule): Promise<ScheduleRow> {
    const { rows } = await this.pool.query<ScheduleRecord>(SQL.insertSchedule, [
      newId(),
      sessionId,
      schedule.title,
      schedule.prompt,
      JSON.stringify(schedule.timing),
      schedule.nextAt,
    ]);
    if (!rows[0]) throw new SessionNotFoundError(sessionId);
    return toSchedule(rows[0]);
  }

  async getSchedule(id: string): Promise<ScheduleRow | undefined> {
    const { rows } = await this.pool.query<ScheduleRecord>(SQL.getSchedule, [id]);
    return rows[0] && toSchedule(rows[0]);
  }

  async listSchedules(sessionId: string): Promise<ScheduleRow[]> {
    const { rows } = await this.pool.query<ScheduleRecord>(SQL.listSchedules, [sessionId]);
    return rows.map(toSchedule);
  }

  async updateSchedule(id: string, patch: SchedulePatch): Promise<ScheduleRow | undefined> {
    const { rows } = await this.pool.query<ScheduleRecord>(SQL.updateSchedule, [
      id,
      patch.title ?? null,
      patch.prompt ?? null,
      patch.timing === undefined ? null : JSON.stringify(patch.timing),
      patch.nextAt !== undefined,
      patch.nextAt ?? null,
    ]);
    return rows[0] && toSchedule(rows[0]);
  }

  async deleteSchedule(id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(SQL.deleteSchedule, [id]);
    return (rowCount ?? 0) > 0;
  }

  async dueSchedules(nowMs: number, limit = DEFAULT_LIST_LIMIT): Promise<ScheduleRow[]> {
    checkLimit(limit);
    const { rows } = await this.pool.query<ScheduleRecord>({ ...SQL.dueSchedules, values: [nowMs, limit] });
    return rows.map(toSchedule);
  }

  async claimScheduleOccurrence(
    id: string,
    claim: { expectedNextAt: number; occurrenceAt: number; nextAt: number | null },
    item: NewInboxItem,
  ): Promise<InboxItem | undefined> {
    const v = newInboxValues(item);
    const { rows } = await this.pool.query<InboxRecord>({
      ...SQL.claimOccurrence,
      values: [
        id,
        claim.expectedNextAt,
        claim.occurrenceAt,
        claim.nextAt,
        v.id,
        v.queue,
        v.mode,
        v.source,
        v.text,
        v.metadata,
      ],
    });
    return rows[0] && toInboxItem(rows[0]);
  }
}
