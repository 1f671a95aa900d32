/**
 * Durable process receipts (Hermes tools-runtime process registry, seed 000 `tools-runtime.md`):
 * what a background job leaves in the store, so any server can answer `job_output` and `job_list` for it.
 *
 * Invariants:
 * - One row per job `(session_id, job_id)`. While the process runs the row is its checkpoint
 *   (`state = 'running'`, with the host, pid and the pid's start time); when it ends, `complete` turns it
 *   into the receipt in one statement (atomic), and only from `running`: a written receipt is never
 *   overwritten, and a producer cannot rewrite another session's row (the key includes the session).
 * - The receipt holds the redacted command, label, exit status, timing, the output's tail and the id of
 *   the full output's blob (a spill row). The caller redacts; this layer stores what it is given.
 * - Reads are by `(session, job)`: knowing a job id alone reads nothing. Who may read whose receipts (the
 *   starting session, its forks) is decided above this layer (jobs/receipts.ts).
 * - Retention: `prune` deletes finished receipts older than the age, and past the newest N of a session.
 */
import type Database from "better-sqlite3";
import type pg from "pg";
import { POOLED_STATEMENTS, StatementCombiner } from "./statement-combiner.js";

export type ReceiptState = "running" | "completed" | "failed" | "signaled" | "killed" | "lost";

export type ProcessCheckpoint = {
  sessionId: string;
  jobId: string;
  kind: string;
  label: string;
  command: string;
  backend: string;
  /** The host (server) the process runs on. */
  host: string;
  pid: number | null;
  /** `/proc/<pid>/stat` start time (clock ticks since boot); null when unknown. */
  startTicks: number | null;
  /** Epoch ms. */
  startedAt: number;
};

export type ProcessReceipt = ProcessCheckpoint & {
  state: ReceiptState;
  exitCode: number | null;
  signal: string | null;
  /** Epoch ms; null while running. */
  finishedAt: number | null;
  /** Redacted, at most the job ring's size. */
  outputTail: string;
  /** Bytes the job wrote in all. */
  outputBytes: number;
  /** Bytes of output the model has read (job_output). */
  readBytes: number;
  /** The blob with the full redacted output (`spill://`), or null. */
  outputBlobId: string | null;
  /** Why the outcome is unknown (`lost`), or null. */
  note: string | null;
};

export type ReceiptCompletion = Pick<
  ProcessReceipt,
  | "sessionId"
  | "jobId"
  | "state"
  | "exitCode"
  | "signal"
  | "finishedAt"
  | "outputTail"
  | "outputBytes"
  | "readBytes"
  | "outputBlobId"
  | "note"
> &
  Partial<ProcessCheckpoint>;

/** The receipts part of the store (`Store.processReceipts`). */
export interface ProcessReceiptStore {
  /** Records a started process (its checkpoint). A second call for the same job changes nothing. */
  checkpoint(input: ProcessCheckpoint): Promise<void>;
  /**
   * Writes the receipt: from the running checkpoint, or as a new row when there was none. False (nothing
   * written) when a receipt exists already.
   */
  complete(receipt: ReceiptCompletion): Promise<boolean>;
  get(sessionId: string, jobId: string): Promise<ProcessReceipt | undefined>;
  /** The session's receipts and checkpoints, oldest first. */
  list(sessionId: string, limit?: number): Promise<ProcessReceipt[]>;
  /**
   * The session's checkpoints still `running` on `host` (adoption after a restart). By the session first,
   * through the primary key: an agent's open reads its own few rows, not every job of the host.
   */
  runningOn(host: string, sessionId: string): Promise<ProcessReceipt[]>;
  /** Advances what the model has read of a finished job (never backwards). */
  markRead(sessionId: string, jobId: string, readBytes: number): Promise<void>;
  /** Deletes finished receipts finished before `olderThan` (epoch ms) or past the newest `keepPerSession`. */
  prune(options: { olderThan: number; keepPerSession: number; sessionId?: string }): Promise<number>;
}

type ReceiptRecord = {
  session_id: string;
  job_id: string;
  kind: string;
  label: string;
  command: string;
  backend: string;
  host: string;
  pid: number | string | null;
  start_ticks: number | string | null;
  started_at: number | string;
  state: string;
  exit_code: number | null;
  signal: string | null;
  finished_at: number | string | null;
  output_tail: string;
  output_bytes: number | string;
  read_bytes: number | string;
  output_blob_id: string | null;
  note: string | null;
};

const COLUMNS =
  "session_id, job_id, kind, label, command, backend, host, pid, start_ticks, started_at, state, exit_code, signal, finished_at, output_tail, output_bytes, read_bytes, output_blob_id, note";

const num = (value: number | string | null): number | null => (value === null ? null : Number(value));

function toReceipt(row: ReceiptRecord): ProcessReceipt {
  return {
    sessionId: row.session_id,
    jobId: row.job_id,
    kind: row.kind,
    label: row.label,
    command: row.command,
    backend: row.backend,
    host: row.host,
    pid: num(row.pid),
    startTicks: num(row.start_ticks),
    startedAt: Number(row.started_at),
    state: row.state as ReceiptState,
    exitCode: row.exit_code,
    signal: row.signal,
    finishedAt: num(row.finished_at),
    outputTail: row.output_tail,
    outputBytes: Number(row.output_bytes),
    readBytes: Number(row.read_bytes),
    outputBlobId: row.output_blob_id,
    note: row.note,
  };
}

function completionValues(r: ReceiptCompletion) {
  return {
    sessionId: r.sessionId,
    jobId: r.jobId,
    kind: r.kind ?? "",
    label: r.label ?? "",
    command: r.command ?? "",
    backend: r.backend ?? "",
    host: r.host ?? "",
    pid: r.pid ?? null,
    startTicks: r.startTicks ?? null,
    startedAt: r.startedAt ?? r.finishedAt ?? Date.now(),
    state: r.state,
    exitCode: r.exitCode,
    signal: r.signal,
    finishedAt: r.finishedAt,
    outputTail: r.outputTail,
    outputBytes: r.outputBytes,
    readBytes: r.readBytes,
    outputBlobId: r.outputBlobId,
    note: r.note,
  };
}

export class SqliteProcessReceipts implements ProcessReceiptStore {
  private statements: ReturnType<SqliteProcessReceipts["prepare"]> | undefined;

  constructor(private readonly db: Database.Database) {}

  /** Prepared on first use: the table exists only after `migrate()`. */
  private get s() {
    this.statements ??= this.prepare();
    return this.statements;
  }

  private prepare() {
    const db = this.db;
    return {
      checkpoint: db.prepare(
        `INSERT INTO process_receipts (${COLUMNS}) VALUES (@sessionId, @jobId, @kind, @label, @command, @backend, @host, @pid, @startTicks, @startedAt, 'running', NULL, NULL, NULL, '', 0, 0, NULL, NULL)
         ON CONFLICT (session_id, job_id) DO NOTHING`,
      ),
      complete: db.prepare(
        `INSERT INTO process_receipts (${COLUMNS}) VALUES (@sessionId, @jobId, @kind, @label, @command, @backend, @host, @pid, @startTicks, @startedAt, @state, @exitCode, @signal, @finishedAt, @outputTail, @outputBytes, @readBytes, @outputBlobId, @note)
         ON CONFLICT (session_id, job_id) DO UPDATE SET state = excluded.state, exit_code = excluded.exit_code,
           signal = excluded.signal, finished_at = excluded.finished_at, output_tail = excluded.output_tail,
           output_bytes = excluded.output_bytes, read_bytes = excluded.read_bytes,
           output_blob_id = excluded.output_blob_id, note = excluded.note
         WHERE process_receipts.state = 'running'`,
      ),
      get: db.prepare(`SELECT ${COLUMNS} FROM process_receipts WHERE session_id = ? AND job_id = ?`),
      list: db.prepare(
        `SELECT ${COLUMNS} FROM process_receipts WHERE session_id = ? ORDER BY started_at, job_id LIMIT ?`,
      ),
      runningOn: db.prepare(
        `SELECT ${COLUMNS} FROM process_receipts WHERE session_id = ? AND host = ? AND state = 'running'`,
      ),
      markRead: db.prepare(
        "UPDATE process_receipts SET read_bytes = max(read_bytes, ?) WHERE session_id = ? AND job_id = ? AND state <> 'running'",
      ),
      pruneAge: db.prepare(
        "DELETE FROM process_receipts WHERE state <> 'running' AND finished_at < @olderThan AND (@sessionId IS NULL OR session_id = @sessionId)",
      ),
      pruneCount: db.prepare(
        `DELETE FROM process_receipts WHERE state <> 'running' AND (@sessionId IS NULL OR session_id = @sessionId)
           AND (session_id, job_id) IN (SELECT session_id, job_id FROM (
             SELECT session_id, job_id, row_number() OVER (PARTITION BY session_id ORDER BY finished_at DESC, job_id DESC) AS n
             FROM process_receipts WHERE state <> 'running') WHERE n > @keep)`,
      ),
    };
  }

  async checkpoint(input: ProcessCheckpoint): Promise<void> {
    this.s.checkpoint.run(input);
  }

  async complete(receipt: ReceiptCompletion): Promise<boolean> {
    return this.s.complete.run(completionValues(receipt)).changes > 0;
  }

  async get(sessionId: string, jobId: string): Promise<ProcessReceipt | undefined> {
    const row = this.s.get.get(sessionId, jobId) as ReceiptRecord | undefined;
    return row && toReceipt(row);
  }

  async list(sessionId: string, limit = 1_000): Promise<ProcessReceipt[]> {
    return (this.s.list.all(sessionId, limit) as ReceiptRecord[]).map(toReceipt);
  }

  async runningOn(host: string, sessionId: string): Promise<ProcessReceipt[]> {
    return (this.s.runningOn.all(sessionId, host) as ReceiptRecord[]).map(toReceipt);
  }

  async markRead(sessionId: string, jobId: string, readBytes: number): Promise<void> {
    this.s.markRead.run(readBytes, sessionId, jobId);
  }

  async prune(options: { olderThan: number; keepPerSession: number; sessionId?: string }): Promise<number> {
    const sessionId = options.sessionId ?? null;
    const aged = this.s.pruneAge.run({ olderThan: options.olderThan, sessionId }).changes;
    const counted = this.s.pruneCount.run({ keep: options.keepPerSession, sessionId }).changes;
    return aged + counted;
  }
}

/** One (host, session) pair as a key. */
function pairKey(host: string, sessionId: string): string {
  return `${host}\0${sessionId}`;
}

export class PostgresProcessReceipts implements ProcessReceiptStore {
  /**
   * `runningOn`, gathered: every agent that opens reads its session's checkpoints once, so a thousand
   * sessions opening together read theirs in a few statements, not a thousand.
   */
  private readonly running = new StatementCombiner<{ host: string; sessionId: string }, ProcessReceipt[]>({
    run: (batch) => this.readRunning(batch),
    ...POOLED_STATEMENTS,
  });

  constructor(private readonly pool: pg.Pool) {}

  async checkpoint(i: ProcessCheckpoint): Promise<void> {
    await this.pool.query(
      `INSERT INTO process_receipts (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'running', NULL, NULL, NULL, '', 0, 0, NULL, NULL)
       ON CONFLICT (session_id, job_id) DO NOTHING`,
      [i.sessionId, i.jobId, i.kind, i.label, i.command, i.backend, i.host, i.pid, i.startTicks, i.startedAt],
    );
  }

  async complete(receipt: ReceiptCompletion): Promise<boolean> {
    const v = completionValues(receipt);
    const result = await this.pool.query(
      `INSERT INTO process_receipts (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
       ON CONFLICT (session_id, job_id) DO UPDATE SET state = excluded.state, exit_code = excluded.exit_code,
         signal = excluded.signal, finished_at = excluded.finished_at, output_tail = excluded.output_tail,
         output_bytes = excluded.output_bytes, read_bytes = excluded.read_bytes,
         output_blob_id = excluded.output_blob_id, note = excluded.note
       WHERE process_receipts.state = 'running'`,
      [
        v.sessionId,
        v.jobId,
        v.kind,
        v.label,
        v.command,
        v.backend,
        v.host,
        v.pid,
        v.startTicks,
        v.startedAt,
        v.state,
        v.exitCode,
        v.signal,
        v.finishedAt,
        v.outputTail,
        v.outputBytes,
        v.readBytes,
        v.outputBlobId,
        v.note,
      ],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async get(sessionId: string, jobId: string): Promise<ProcessReceipt | undefined> {
    const result = await this.pool.query<ReceiptRecord>(
      `SELECT ${COLUMNS} FROM process_receipts WHERE session_id = $1 AND job_id = $2`,
      [sessionId, jobId],
    );
    return result.rows[0] && toReceipt(result.rows[0]);
  }

  async list(sessionId: string, limit = 1_000): Promise<ProcessReceipt[]> {
    const result = await this.pool.query<ReceiptRecord>(
      `SELECT ${COLUMNS} FROM process_receipts WHERE session_id = $1 ORDER BY started_at, job_id LIMIT $2`,
      [sessionId, limit],
    );
    return result.rows.map(toReceipt);
  }

  async runningOn(host: string, sessionId: string): Promise<ProcessReceipt[]> {
    return this.running.submit({ host, sessionId }, pairKey(host, sessionId), 1);
  }

  /** The running checkpoints of several (host, session) pairs in one statement, answered per pair. */
  private async readRunning(
    batch: readonly { host: string; sessionId: string }[],
  ): Promise<PromiseSettledResult<ProcessReceipt[]>[]> {
    const result = await this.pool.query<ReceiptRecord>({
      name: "bdsh_receipts_running",
      text: `SELECT ${COLUMNS} FROM process_receipts
        WHERE state = 'running' AND (session_id, host) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      values: [batch.map((pair) => pair.sessionId), batch.map((pair) => pair.host)],
    });
    const byPair = new Map<string, ProcessReceipt[]>();
    for (const row of result.rows) {
      const key = pairKey(row.host, row.session_id);
      byPair.set(key, [...(byPair.get(key) ?? []), toReceipt(row)]);
    }
    return batch.map(({ host, sessionId }) => ({
      status: "fulfilled",
      value: byPair.get(pairKey(host, sessionId)) ?? [],
    }));
  }

  async markRead(sessionId: string, jobId: string, readBytes: number): Promise<void> {
    await this.pool.query(
      "UPDATE process_receipts SET read_bytes = greatest(read_bytes, $1) WHERE session_id = $2 AND job_id = $3 AND state <> 'running'",
      [readBytes, sessionId, jobId],
    );
  }

  async prune(options: { olderThan: number; keepPerSession: number; sessionId?: string }): Promise<number> {
    const sessionId = options.sessionId ?? null;
    const aged = await this.pool.query(
      "DELETE FROM process_receipts WHERE state <> 'running' AND finished_at < $1 AND ($2::text IS NULL OR session_id = $2)",
      [options.olderThan, sessionId],
    );
    const counted = await this.pool.query(
      `DELETE FROM process_receipts p USING (
         SELECT session_id, job_id, row_number() OVER (PARTITION BY session_id ORDER BY finished_at DESC, job_id DESC) AS n
         FROM process_receipts WHERE state <> 'running' AND ($2::text IS NULL OR session_id = $2)
       ) ranked
       WHERE p.session_id = ranked.session_id AND p.job_id = ranked.job_id AND ranked.n > $1`,
      [options.keepPerSession, sessionId],
    );
    return (aged.rowCount ?? 0) + (counted.rowCount ?? 0);
  }
}
