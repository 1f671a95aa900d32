/**
 * Goals and schedules as rows (P3, S8; C15: rows, not memory): the types both dialects return and the
 * mapping from stored columns. The store keeps a schedule's timing as opaque JSON; `src/planning/` knows
 * what it means.
 *
 * Invariants:
 * - At most one goal per session (a unique `session_id`); a complete goal may be replaced by a new one.
 * - A goal changes only by compare-and-set on `{id, revision}`; every change bumps the revision.
 * - "Claim round N" is one atomic conditional update that also queues the round's follow-up: of two
 *   processes claiming the same round, exactly one wins, and a counted round is never lost.
 * - "Claim occurrence T" advances `next_at` from T only if it is still T, and queues the reminder in the same
 *   transaction: each occurrence is delivered exactly once, whichever process claims it.
 * - Times of schedules are epoch milliseconds (exact equality for the claim); timestamps leave as ISO-8601.
 */
import type { GoalPhase, GoalSnapshot } from "../log/events.js";
import { isoOf } from "./rows.js";
import { StoreError } from "./store.js";

export type GoalRow = GoalSnapshot & { sessionId: string; createdAt: string; updatedAt: string };

export type NewGoal = { objective: string; maxRounds: number };

/** Fields a compare-and-set may change; `blockedReason: null` clears it. */
export type GoalPatch = { objective?: string; phase?: GoalPhase; blockedReason?: string | null };

export type ScheduleRow = {
  id: string;
  sessionId: string;
  title: string;
  prompt: string;
  /** The timing as the planning layer wrote it (S8: after_seconds | at | every_seconds | daily | weekly | cron). */
  timing: Record<string, unknown>;
  /** Epoch ms of the next occurrence; null once a one-shot schedule has fired. */
  nextAt: number | null;
  lastOccurrenceAt: number | null;
  createdAt: string;
  updatedAt: string;
};

export type NewSchedule = {
  title: string;
  prompt: string;
  timing: Record<string, unknown>;
  nextAt: number | null;
};

export type SchedulePatch = {
  title?: string;
  prompt?: string;
  timing?: Record<string, unknown>;
  nextAt?: number | null;
};

/** The session already has a goal that is not complete. */
export class GoalExistsError extends StoreError {
  constructor(readonly sessionId: string) {
    super("GOAL_EXISTS", `session ${sessionId} already has an open goal`);
  }
}

export type GoalRecord = {
  id: string;
  session_id: string;
  revision: number | string;
  objective: string;
  phase: string;
  rounds_started: number;
  max_rounds: number;
  blocked_reason: string | null;
  created_at: string | Date;
  updated_at: string | Date;
};

export function toGoal(row: GoalRecord): GoalRow {
  return {
    id: row.id,
    sessionId: row.session_id,
    revision: Number(row.revision),
    objective: row.objective,
    phase: row.phase as GoalPhase,
    roundsStarted: row.rounds_started,
    maxRounds: row.max_rounds,
    ...(row.blocked_reason !== null ? { blockedReason: row.blocked_reason } : {}),
    createdAt: isoOf(row.created_at),
    updatedAt: isoOf(row.updated_at),
  };
}

export type ScheduleRecord = {
  id: string;
  session_id: string;
  title: string;
  prompt: string;
  timing: string;
  next_at: number | string | null;
  last_occurrence_at: number | string | null;
  created_at: string | Date;
  updated_at: string | Date;
};

export function toSchedule(row: ScheduleRecord): ScheduleRow {
  return {
    id: row.id,
    sessionId: row.session_id,
    title: row.title,
    prompt: row.prompt,
    timing: JSON.parse(row.timing) as Record<string, unknown>,
    nextAt: row.next_at === null ? null : Number(row.next_at),
    lastOccurrenceAt: row.last_occurrence_at === null ? null : Number(row.last_occurrence_at),
    createdAt: isoOf(row.created_at),
    updatedAt: isoOf(row.updated_at),
  };
}

export function checkObjective(objective: string): void {
  if (objective.trim() === "") throw new StoreError("INVALID_INPUT", "a goal needs an objective");
}
