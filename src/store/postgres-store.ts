/**
 * The scale-out store: PostgreSQL through a `pg` Pool, shared by any number of servers (C15: servers are
 * disposable; everything they need is in rows).
 *
 * Invariants:
 * - Each call is one short transaction: the loop's durability points (L17) are appends, and a step's events
 *   land together or not at all. The expected-seq check is also what makes `compaction/start` a lock (C9).
 * - `append` is one statement, one round trip (see postgres-statements.ts), with or without `claimInbox`
 *   (a claim that finds a row no longer pending raises inside the statement). All or nothing; a zero-row
 *   append is diagnosed by a second read so the caller gets the right typed error (conflict with the actual
 *   seq, lost lease, unknown session).
 * - Group commit: appends go through a StatementCombiner. Alone, an append is its own statement; appends of
 *   several sessions waiting at once share one (`appendBatchStatement`), each checked and stored or
 *   refused as alone, and a batch refused as a whole is retried one append at a time. Messages with their
 *   claim (`enqueueAndClaim`) are gathered the same way, in a combiner of their own
 *   (`SQL.enqueueAndClaimBatch`).
 * - Durability (`synchronousCommit`, default `effects`): an append asking only for `commit` durability turns
 *   `synchronous_commit` off for its own transaction, inside the statement (`set_config(…, true)`); every
 *   other write waits for its WAL flush, which also covers every earlier commit.
 * - Event `data` and `at` are `text` (not `jsonb`, which reorders keys): byte-for-byte round trip (M23).
 * - Lease expiry and fencing use the database clock (`now()`): servers need not agree on time.
 * - Migrations run under `pg_advisory_xact_lock`, taken before anything is created, so servers starting
 *   together apply each migration once.
 * - Notifications: appends NOTIFY `bdsh_events` with `<sessionId>:<seq>`, added or discarded inbox items
 *   NOTIFY `bdsh_inbox` with the session id (for an added row, with its id and kind: `parseInboxPayload`),
 *   both delivered at commit. One supervised listener connection per store
 *   (pg-listener.ts) starts with the first subscriber; every (re)connect is announced as `resync`.
 * - `location` never contains the password.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { LogEvent, NewEvent } from "../log/events.js";
import { followEvents } from "./follow.js";
import { MIGRATION_LOCK_KEY, POSTGRES_MIGRATIONS } from "./migrations.js";
import { NotificationHub } from "./notification-hub.js";
import { PgListener } from "./pg-listener.js";
import { PostgresPlanning } from "./postgres-planning.js";
import {
  appendBatchStatement,
  appendStatement,
  EVENTS_CHANNEL,
  INBOX_CHANNEL,
  MAX_SEQ,
  type NamedStatement,
  parseInboxPayload,
  SQL,
} from "./postgres-statements.js";
import { PostgresProcessReceipts } from "./process-receipts.js";
import { redactUrl } from "./redact-url.js";
import {
  appendedEvents,
  type BlobRecord,
  blobBytes,
  cancelRequestValues,
  checkLimit,
  checkTtl,
  DEFAULT_LIST_LIMIT,
  type EncodedEvent,
  type EventRecord,
  type InboxRecord,
  type InboxRowValues,
  listingFilters,
  newId,
  newInboxValues,
  newSessionValues,
  type PreparedAppend,
  prepareAppend,
  type SessionRecord,
  toBlobRef,
  toEvent,
  toInboxItem,
  toSession,
  uniqueIds,
} from "./rows.js";
import { MAX_CANDIDATES, pickSessionId, prefixRange, uniquePrefix } from "./session-ids.js";
import { POOLED_STATEMENTS, StatementCombiner } from "./statement-combiner.js";
import {
  AppendConflictError,
  type AppendOptions,
  type BlobRef,
  type CreateSessionInput,
  type DriveRead,
  type EnqueueClaim,
  type EnqueuedClaim,
  type EnqueueOptions,
  type FollowOptions,
  InboxClaimError,
  type InboxItem,
  type LatestSessionOptions,
  type Lease,
  LeaseLostError,
  type ListSessionsOptions,
  type NewInboxItem,
  type OrphanClaim,
  type ReadOptions,
  type ReadyQueue,
  SessionArchivedError,
  SessionNotFoundError,
  type SessionPatch,
  type SessionRow,
  type Store,
  StoreError,
  type StoreNotification,
  type SubscribeOptions,
  sessionLeaseName,
} from "./store.js";

export type PostgresStoreOptions = {
  connectionString: string;
  /** Shown in `pg_stat_activity`; the listener connection gets `<name>:listener`. */
  applicationName?: string;
  poolSize?: number;
  /** Default `effects`; see `OpenStoreOptions.postgresSynchronousCommit`. */
  synchronousCommit?: PostgresSynchronousCommit;
  /** Listener heartbeat period (default 10 s). */
  heartbeatMs?: number;
};

export type PostgresSynchronousCommit = "on" | "effects" | "off";

type Queryable = Pick<pg.PoolClient, "query">;
/** SQLSTATE raised by `bdsh_refuse_claim` (migration 3). */
const CLAIM_REFUSED = "BD001";
type LeaseRecord = { name: string; owner: string; expires_at: number; fence: number };

export class PostgresStore implements Store {
  readonly kind = "postgres";
  readonly location: string;
  private readonly pool: pg.Pool;
  private readonly hub: NotificationHub;
  private readonly listener: PgListener;
  readonly planning: PostgresPlanning;
  readonly processReceipts: PostgresProcessReceipts;
  /** `effects`: an append asking only for `commit` durability skips its WAL flush. */
  private readonly honourDurability: boolean;
  /** Appends without a claim go through it: alone when the store is quiet, several sessions' together under load. */
  private readonly appends = new StatementCombiner<PreparedAppend, boolean>({
    run: (batch) => this.runAppends(batch),
    ...POOLED_STATEMENTS,
  });
  /** Messages with their session's claim (`enqueueAndClaim`), gathered as appends are. */
  private readonly intake = new StatementCombiner<Intake, EnqueuedClaim>({
    run: (batch) => this.runIntake(batch),
    ...POOLED_STATEMENTS,
  });

  constructor(options: PostgresStoreOptions) {
    const applicationName = options.applicationName ?? "bdsh";
    this.location = redactUrl(options.connectionString);
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      application_name: applicationName,
    });
    // Per connection, queued before any query the pool hands it out for (a connection string's own
    // `options` parameter, e.g. a search_path, would override a startup option).
    this.honourDurability = (options.synchronousCommit ?? "effects") === "effects";
    if (options.synchronousCommit === "off")
      this.pool.on("connect", (client) => void client.query("SET synchronous_commit = off").catch(() => {}));
    // An idle pooled connection that dies (restart, pg_terminate_backend) is dropped by the pool; without
    // this handler the 'error' event would crash the process.
    this.pool.on("error", () => {});
    this.planning = new PostgresPlanning(this.pool);
    this.processReceipts = new PostgresProcessReceipts(this.pool);
    this.hub = new NotificationHub({ onFirst: () => this.listener.start() });
    this.listener = new PgListener({
      connectionString: options.connectionString,
      channels: [INBOX_CHANNEL],
      applicationName: `${applicationName}:listener`,
      ...(options.heartbeatMs ? { heartbeatMs: options.heartbeatMs } : {}),
      onNotification: (channel, payload) => this.dispatch(channel, payload),
      onConnected: () => this.hub.emit({ channel: "resync" }),
    });
  }

  async migrate(): Promise<void> {
    await this.transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
      await client.query(SQL.migrationsTable);
      const { rows } = await client.query<{ version: number }>("SELECT version FROM schema_migrations");
      const applied = new Set(rows.map((r) => r.version));
      for (const m of POSTGRES_MIGRATIONS) {
        if (applied.has(m.version)) continue;
        await client.query(m.sql);
        await client.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
          m.version,
          m.name,
        ]);
      }
    });
  }

  async close(): Promise<void> {
    // Writes made before close are stored, not failed by it.
    await Promise.all([this.appends.idle(), this.intake.idle()]);
    await this.listener.stop();
    await this.pool.end();
  }

  async createSession(input?: CreateSessionInput): Promise<SessionRow> {
    const v = newSessionValues(input);
    try {
      const { rows } = await this.pool.query<SessionRecord>(SQL.insertSession, [
        v.id,
        v.parentId,
        v.kind,
        v.title,
        v.status,
        v.metadata,
      ]);
      return toSession(rows[0]!);
    } catch (error) {
      if (error instanceof pg.DatabaseError && error.code === "23505") {
        throw new StoreError("SESSION_EXISTS", `session ${v.id} already exists`);
      }
      throw error;
    }
  }

  async getSession(id: string): Promise<SessionRow | undefined> {
    const { rows } = await this.pool.query<SessionRecord>({ ...SQL.getSession, values: [id] });
    return rows[0] && toSession(rows[0]);
  }

  async listSessions(options: ListSessionsOptions = {}): Promise<SessionRow[]> {
    const { query, after } = listingFilters(options);
    const limit = options.limit ?? DEFAULT_LIST_LIMIT;
    const all = options.includeArchived ?? false;
    const parent = options.parentId ?? null;
    const workspace = options.workspace ?? null;
    const { rows } =
      options.order === "activity"
        ? await this.pool.query<SessionRecord>(SQL.listByActivity, [
            all,
            parent,
            limit,
            workspace,
            query,
            after?.updatedAt ?? null,
            after?.id ?? null,
          ])
        : await this.pool.query<SessionRecord>(SQL.listSessions, [
            options.before ?? null,
            all,
            parent,
            limit,
            workspace,
            query,
          ]);
    return rows.map(toSession);
  }

  async resolveSessionId(prefix: string): Promise<string> {
    const { low, high } = prefixRange(prefix);
    const { rows } = await this.pool.query<{ id: string }>(SQL.sessionIdsInRange, [
      low,
      high,
      MAX_CANDIDATES + 1,
    ]);
    return pickSessionId(
      prefix,
      rows.map((r) => r.id),
    );
  }

  async latestSession(options: LatestSessionOptions): Promise<SessionRow | undefined> {
    const { rows } = await this.pool.query<SessionRecord>(SQL.latestSession, [
      options.workspace,
      options.includeArchived ?? false,
    ]);
    return rows[0] && toSession(rows[0]);
  }

  async uniqueIdPrefixes(ids: readonly string[], minLength?: number): Promise<Map<string, string>> {
    const { rows } = await this.pool.query<{ id: string; previous: string | null; next: string | null }>(
      SQL.sessionIdNeighbours,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, uniquePrefix(r.id, r, minLength)]));
  }

  async updateSession(id: string, patch: SessionPatch): Promise<SessionRow> {
    const { rows } = await this.pool.query<SessionRecord>({
      ...SQL.updateSession,
      values: [
        id,
        patch.title !== undefined,
        patch.title ?? null,
        patch.status ?? null,
        patch.archived ?? null,
        patch.metadata === undefined ? null : JSON.stringify(patch.metadata),
      ],
    });
    if (!rows[0]) throw new SessionNotFoundError(id);
    return toSession(rows[0]);
  }

  async append(
    sessionId: string,
    events: readonly NewEvent[],
    expectedSeq: number,
    options: AppendOptions = {},
  ): Promise<LogEvent[]> {
    const write = prepareAppend(sessionId, events, expectedSeq, options);
    if (!(await this.appends.submit(write, sessionId, bytesOf(write.encoded))))
      return this.refuse(this.pool, sessionId, expectedSeq, write.owner);
    return appendedEvents(sessionId, expectedSeq, events, write.encoded);
  }

  /**
   * One append by itself: whether its seq and lease checks matched (one row). A claim that finds a row no
   * longer pending raises inside the statement (nothing is kept) and is answered as an InboxClaimError.
   */
  private async appendAlone(write: PreparedAppend): Promise<boolean> {
    const claiming = write.claims.length > 0;
    // Claims do not NOTIFY: inbox notifications announce added input; a claim is seen as its events.
    const statement = appendStatement({ claiming, flushWal: this.flushWal(write), releasing: write.release });
    const values = [
      write.sessionId,
      write.expectedSeq,
      sessionLeaseName(write.sessionId),
      write.owner,
      ...columnsOf(write.encoded),
      write.turnOpen,
      write.title,
    ];
    try {
      const { rowCount } = await this.pool.query({
        ...statement,
        values: claiming ? [...values, write.claims] : values,
      });
      return rowCount === 1;
    } catch (error) {
      if ((error as { code?: string }).code !== CLAIM_REFUSED) throw error;
      const { rows } = await this.pool.query<{ id: string }>({
        ...SQL.stillPending,
        values: [write.sessionId, write.claims],
      });
      const pending = new Set(rows.map((r) => r.id));
      throw new InboxClaimError(
        write.sessionId,
        write.claims.filter((id) => !pending.has(id)),
      );
    }
  }

  /** Whether the append waits for its WAL flush: always, unless the store honours a `commit`-only ask. */
  private flushWal(write: PreparedAppend): boolean {
    return !this.honourDurability || write.disk;
  }

  /**
   * The combiner's statement: one append as it always ran, or several sessions' in one (group commit), which
   * waits for the WAL flush if any of them asked for it. A batch the database refuses as a whole (a value a
   * column rejects, a claim lost to a concurrent discard, a deadlock with another server's batch) is retried
   * one append at a time, so each gets its own answer and one bad write never fails the others. A claiming
   * append the batch left out is also run alone: only its own statement tells a refused claim (and which
   * rows) from a seq or lease conflict.
   */
  private async runAppends(batch: readonly PreparedAppend[]): Promise<PromiseSettledResult<boolean>[]> {
    if (batch.length === 1) return Promise.allSettled([this.appendAlone(batch[0]!)]);
    let rows: { k: number }[];
    try {
      ({ rows } = await this.pool.query<{ k: number }>({
        ...appendBatchStatement(batch.some((write) => this.flushWal(write))),
        values: batchValues(batch),
      }));
    } catch {
      return Promise.allSettled(batch.map((write) => this.appendAlone(write)));
    }
    const matched = new Set(rows.map((row) => row.k));
    return Promise.allSettled(
      batch.map((write, i) =>
        matched.has(i + 1) ? true : write.claims.length > 0 ? this.appendAlone(write) : false,
      ),
    );
  }

  async read(sessionId: string, options: ReadOptions = {}): Promise<LogEvent[]> {
    checkLimit(options.limit);
    const { rows } = await this.pool.query<EventRecord>({
      ...SQL.read,
      values: [
        sessionId,
        Math.min(options.after ?? 0, MAX_SEQ),
        Math.min(options.upTo ?? MAX_SEQ, MAX_SEQ),
        options.types ?? null,
        options.limit ?? null,
      ],
    });
    return rows.map(toEvent);
  }

  async readForDrive(sessionId: string, after: number): Promise<DriveRead> {
    const { rows } = await this.pool.query<
      EventRecord & { pending: DrivePendingJson[] | null; session: DriveSessionJson | null }
    >({ ...SQL.readForDrive, values: [sessionId, Math.min(after, MAX_SEQ)] });
    // The statement's final row: the pending input and the session.
    return driveReadOf(rows.slice(0, -1), rows.at(-1)!);
  }

  follow(sessionId: string, options?: FollowOptions): AsyncIterable<LogEvent> {
    return followEvents(this, sessionId, options);
  }

  async enqueueInbox(
    sessionId: string,
    item: NewInboxItem,
    options: EnqueueOptions = {},
  ): Promise<InboxItem> {
    return toInboxItem(
      await this.insertInbox(sessionId, newInboxValues(item), options.refuseArchived ?? false),
    );
  }

  async enqueueAndClaim(
    sessionId: string,
    item: NewInboxItem,
    claim: EnqueueClaim,
    options: EnqueueOptions = {},
  ): Promise<EnqueuedClaim> {
    checkTtl(claim.ttlMs);
    const message: Intake = {
      sessionId,
      values: newInboxValues(item),
      claim,
      refuseArchived: options.refuseArchived ?? false,
    };
    return this.intake.submit(
      message,
      sessionId,
      message.values.text.length + message.values.metadata.length,
    );
  }

  /** One message and its claim by itself: migration 8's function, as one statement. */
  private async enqueueAlone(message: Intake): Promise<EnqueuedClaim> {
    const { rows } = await this.pool.query<IntakeRow>({
      ...SQL.enqueueAndClaim,
      values: intakeParameters(message),
    });
    return this.enqueued(message, rows);
  }

  /**
   * The intake combiner's statement: one message as it always ran, or several sessions' in one (group
   * commit). The messages go in session-id order, so two servers' batches take their leases in the same
   * order. A batch the database refuses as a whole (a value a column rejects, a deadlock) is retried one
   * message at a time, so one bad message never fails the others.
   */
  private async runIntake(batch: readonly Intake[]): Promise<PromiseSettledResult<EnqueuedClaim>[]> {
    if (batch.length === 1) return Promise.allSettled([this.enqueueAlone(batch[0]!)]);
    const order = batch.map((_, i) => i).sort((a, b) => compareIds(batch[a]!.sessionId, batch[b]!.sessionId));
    const columns: unknown[][] = Array.from({ length: 12 }, () => []);
    for (const i of order) {
      [...intakeParameters(batch[i]!), i + 1].forEach((value, c) => {
        columns[c]!.push(value);
      });
    }
    let rows: (IntakeRow & { k: number })[];
    try {
      ({ rows } = await this.pool.query<IntakeRow & { k: number }>({
        ...SQL.enqueueAndClaimBatch,
        values: columns,
      }));
    } catch {
      return Promise.allSettled(batch.map((message) => this.enqueueAlone(message)));
    }
    const byMessage = new Map<number, IntakeRow[]>();
    for (const row of rows) {
      const own = byMessage.get(row.k);
      if (own) own.push(row);
      else byMessage.set(row.k, [row]);
    }
    return Promise.allSettled(batch.map((message, i) => this.enqueued(message, byMessage.get(i + 1) ?? [])));
  }

  /** What the function's rows say: the queued row, and the drive's read when the lease was taken. */
  private async enqueued(message: Intake, rows: readonly IntakeRow[]): Promise<EnqueuedClaim> {
    const last = rows.at(-1);
    if (!last?.item) {
      if (message.refuseArchived && (await this.getSession(message.sessionId)))
        throw new SessionArchivedError(message.sessionId);
      throw new SessionNotFoundError(message.sessionId);
    }
    const queued = fromDrivePending(last.item);
    if (!last.claimed) return { item: queued, claimed: undefined };
    return { item: queued, claimed: driveReadOf(rows.slice(0, -1), last) };
  }

  /**
   * One inbox row (input or a cancel request); an unknown session is SessionNotFoundError, an archived one
   * (when refused) SessionArchivedError: which of the two is read only when the insert found no row.
   */
  private async insertInbox(
    sessionId: string,
    v: InboxRowValues,
    refuseArchived = false,
  ): Promise<InboxRecord> {
    const { rows } = await this.pool.query<InboxRecord>({
      ...SQL.enqueueInbox,
      values: [v.id, sessionId, v.queue, v.mode, v.source, v.text, v.metadata, refuseArchived],
    });
    if (rows[0]) return rows[0];
    if (refuseArchived && (await this.getSession(sessionId))) throw new SessionArchivedError(sessionId);
    throw new SessionNotFoundError(sessionId);
  }

  async pendingInbox(sessionId: string): Promise<InboxItem[]> {
    const { rows } = await this.pool.query<InboxRecord>({ ...SQL.pendingInbox, values: [sessionId] });
    return rows.map(toInboxItem);
  }

  async discardInbox(sessionId: string, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const { rowCount } = await this.pool.query(SQL.discardInbox, [sessionId, uniqueIds(ids)]);
    return rowCount ?? 0;
  }

  async requestCancel(sessionId: string): Promise<void> {
    await this.insertInbox(sessionId, cancelRequestValues());
  }

  async harnessKey(name: string): Promise<string> {
    await this.pool.query(
      "INSERT INTO harness_keys (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
      [name, randomBytes(32).toString("base64")],
    );
    const { rows } = await this.pool.query<{ value: string }>(
      "SELECT value FROM harness_keys WHERE name = $1",
      [name],
    );
    return rows[0]!.value;
  }

  async takeCancelRequests(sessionId: string): Promise<number> {
    const { rowCount } = await this.pool.query({ ...SQL.takeCancelRequests, values: [sessionId] });
    return rowCount ?? 0;
  }

  async claimPendingSessions(owner: string, ttlMs: number, limit: number): Promise<string[]> {
    checkTtl(ttlMs);
    if (limit <= 0) return [];
    return (await this.claimLeases(SQL.claimPendingSessions, owner, ttlMs, limit)).ids;
  }

  async readyQueue(): Promise<ReadyQueue> {
    const { rows } = await this.pool.query<{ sessions: string; items: string; oldest: Date | null }>(
      `SELECT count(*) AS sessions, coalesce(sum(r.waiting), 0) AS items,
         (SELECT min(i.created_at) FROM inbox i WHERE i.position IN (SELECT position FROM ready_sessions)) AS oldest
       FROM ready_sessions r`,
    );
    const row = rows[0];
    return {
      sessions: Number(row?.sessions ?? 0),
      items: Number(row?.items ?? 0),
      oldestAt: row?.oldest ? row.oldest.toISOString() : undefined,
    };
  }

  async claimOrphanedSessions(owner: string, ttlMs: number, limit: number): Promise<OrphanClaim> {
    const { ids, nextLapseMs } = await this.claimLeases(SQL.claimOrphanedSessions, owner, ttlMs, limit);
    return { ids, nextLapseMs };
  }

  /** Runs a claim statement (postgres-statements.ts `claimStatement`) until it loses no race, 3 rounds at most. */
  private async claimLeases(
    statement: { name: string; text: string },
    owner: string,
    ttlMs: number,
    limit: number,
  ): Promise<{ ids: string[]; nextLapseMs: number | undefined }> {
    checkTtl(ttlMs);
    checkLimit(limit);
    const claimed: string[] = [];
    let nextLapseMs: number | undefined;
    // A few rounds at most: each lost race removes the contested sessions from the next round's candidates.
    for (let round = 0; round < 3 && (claimed.length < limit || round === 0); round++) {
      let got: { ids: string[]; seen: number; next_lapse_ms?: number | null };
      try {
        const { rows } = await this.pool.query<{
          ids: string[];
          seen: number;
          next_lapse_ms?: number | null;
        }>({ ...statement, values: [owner, ttlMs, limit - claimed.length] });
        got = rows[0]!;
        claimed.push(...got.ids);
        nextLapseMs = got.next_lapse_ms == null ? undefined : Math.max(0, got.next_lapse_ms);
      } catch (error) {
        // Two claimers locking the same leases in different orders: one is chosen to fail; it claims
        // nothing this time and its next sweep tries again.
        if ((error as { code?: string }).code === "40P01") break;
        throw error;
      }
      if (got.ids.length >= got.seen) break; // it got everything it saw: no race lost
    }
    return { ids: claimed, nextLapseMs };
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<Lease | undefined> {
    checkTtl(ttlMs);
    return this.lease(SQL.acquireLease, [name, owner, ttlMs]);
  }

  async renewLease(name: string, owner: string, ttlMs: number): Promise<Lease | undefined> {
    checkTtl(ttlMs);
    return this.lease(SQL.renewLease, [name, owner, ttlMs]);
  }

  async releaseLease(name: string, owner: string): Promise<boolean> {
    const { rowCount } = await this.pool.query({ ...SQL.releaseLease, values: [name, owner] });
    return rowCount === 1;
  }

  async getLease(name: string): Promise<Lease | undefined> {
    return this.lease(SQL.getLease, [name]);
  }

  async putBlob(
    sessionId: string,
    content: Uint8Array | string,
    metadata: Record<string, unknown> = {},
  ): Promise<BlobRef> {
    const bytes = blobBytes(content);
    try {
      const { rows } = await this.pool.query<BlobRecord>(SQL.insertBlob, [
        newId(),
        sessionId,
        bytes.length,
        bytes,
        JSON.stringify(metadata),
      ]);
      return toBlobRef(rows[0]!);
    } catch (error) {
      if (error instanceof pg.DatabaseError && error.code === "23503")
        throw new SessionNotFoundError(sessionId);
      throw error;
    }
  }

  async getBlob(id: string): Promise<{ ref: BlobRef; content: Buffer } | undefined> {
    const { rows } = await this.pool.query<BlobRecord & { content: Buffer }>(SQL.getBlob, [id]);
    const row = rows[0];
    return row && { ref: toBlobRef(row), content: row.content };
  }
  async sessionBlobBytes(sessionId: string): Promise<number> {
    const { rows } = await this.pool.query<{ total: string }>(SQL.sessionBlobBytes, [sessionId]);
    return Number(rows[0]?.total ?? 0);
  }

  /**
   * A new subscriber gets a `resync` once the listener is LISTENing: from then on nothing is missed. The
   * events channel is LISTENed from the first subscriber that wants events on (appends are the busiest
   * notifications; a server that streams no session need not hear them).
   */
  subscribe(listener: (notification: StoreNotification) => void, options?: SubscribeOptions): () => void {
    const unsubscribe = this.hub.add(listener, options);
    let active = true;
    if (options?.events) {
      void this.listener.addChannel(EVENTS_CHANNEL).then(() => {
        if (active && this.listener.connected) listener({ channel: "resync" });
      });
    } else if (this.listener.connected && options?.initialResync !== false)
      queueMicrotask(() => active && listener({ channel: "resync" }));
    return () => {
      active = false;
      unsubscribe();
    };
  }

  private dispatch(channel: string, payload: string): void {
    if (channel === INBOX_CHANNEL) {
      this.hub.emit({ channel: "inbox", ...parseInboxPayload(payload) });
    } else if (channel === EVENTS_CHANNEL) {
      const colon = payload.lastIndexOf(":");
      const seq = Number(payload.slice(colon + 1));
      if (colon > 0 && Number.isSafeInteger(seq)) {
        this.hub.emit({ channel: "events", sessionId: payload.slice(0, colon), seq });
      }
    }
  }

  /**
   * Names why an append matched no row, and throws it. A lost lease wins over a seq conflict (SQLite checks
   * in the same order): a fenced-out writer must stop, not re-read and retry.
   */
  private async refuse(
    db: Queryable,
    sessionId: string,
    expectedSeq: number,
    owner: string | null,
  ): Promise<never> {
    const { rows } = await db.query<{ last_seq: number; held: boolean }>({
      ...SQL.diagnose,
      values: [sessionId, sessionLeaseName(sessionId), owner],
    });
    const row = rows[0];
    if (!row) throw new SessionNotFoundError(sessionId);
    if (owner !== null && !row.held) throw new LeaseLostError(sessionId, owner);
    throw new AppendConflictError(sessionId, expectedSeq, row.last_seq);
  }

  private async lease(statement: NamedStatement, values: unknown[]): Promise<Lease | undefined> {
    const { rows } = await this.pool.query<LeaseRecord>({ ...statement, values });
    const row = rows[0];
    return row && { name: row.name, owner: row.owner, expiresAt: row.expires_at, fence: row.fence };
  }

  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}

/** `readForDrive`'s inbox rows and session row, as JSON (times as whole epoch milliseconds). */
type DrivePendingJson = Omit<InboxRecord, "created_at"> & { created_ms: number };
type DriveSessionJson = Omit<SessionRecord, "created_at" | "updated_at"> & {
  created_ms: number;
  updated_ms: number;
};

function fromDrivePending(row: DrivePendingJson): InboxItem {
  return toInboxItem({ ...row, created_at: new Date(row.created_ms) });
}

/** A drive's read from its event rows and the final row's JSON (`readForDrive`, `enqueueAndClaim`). */
function driveReadOf(
  events: readonly EventRecord[],
  last: { pending: DrivePendingJson[] | null; session: DriveSessionJson | null },
): DriveRead {
  const session = last.session;
  return {
    events: events.map(toEvent),
    pending: (last.pending ?? []).map(fromDrivePending),
    session:
      session === null
        ? undefined
        : toSession({
            ...session,
            created_at: new Date(session.created_ms),
            updated_at: new Date(session.updated_ms),
          }),
  };
}

/** A message waiting to be queued with its session's claim (`enqueueAndClaim`). */
type Intake = { sessionId: string; values: InboxRowValues; claim: EnqueueClaim; refuseArchived: boolean };

/** A row of migration 8's function: an event after `after`, then the final row (`driveReadOf`). */
type IntakeRow = EventRecord & {
  pending: DrivePendingJson[] | null;
  session: DriveSessionJson | null;
  item: DrivePendingJson | null;
  claimed: boolean | null;
};

/** The function's parameters for one message, in its order. */
function intakeParameters(m: Intake): unknown[] {
  const v = m.values;
  return [
    v.id,
    m.sessionId,
    v.queue,
    v.mode,
    v.source,
    v.text,
    v.metadata,
    m.refuseArchived,
    m.claim.owner,
    m.claim.ttlMs,
    m.claim.after === undefined ? null : Math.min(m.claim.after, MAX_SEQ),
  ];
}

/** Byte order, as PostgreSQL's "C" collation would sort them: any fixed order will do for locks. */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** About what an append sends: its events' text (for the combiner's byte cap). */
function bytesOf(encoded: readonly EncodedEvent[]): number {
  let bytes = 0;
  for (const e of encoded) bytes += e.data.length + e.type.length + e.at.length + 16;
  return bytes;
}

/** `appendBatchStatement`'s parameters: per append, per event and per claim, each with the append's 1-based index. */
function batchValues(batch: readonly PreparedAppend[]): unknown[] {
  const events: EncodedEvent[] = [];
  const eventK: number[] = [];
  const seqs: number[] = [];
  const claimK: number[] = [];
  const claimIds: string[] = [];
  batch.forEach((write, i) => {
    write.encoded.forEach((event, j) => {
      events.push(event);
      eventK.push(i + 1);
      seqs.push(write.expectedSeq + 1 + j);
    });
    for (const id of write.claims) {
      claimK.push(i + 1);
      claimIds.push(id);
    }
  });
  return [
    batch.map((w) => w.sessionId),
    batch.map((w) => w.expectedSeq),
    batch.map((w) => w.encoded.length),
    batch.map((w) => sessionLeaseName(w.sessionId)),
    batch.map((w) => w.owner),
    batch.map((w) => w.turnOpen),
    batch.map((w) => w.title),
    batch.map((w) => w.release),
    eventK,
    seqs,
    ...columnsOf(events),
    claimK,
    claimIds,
  ];
}

/** The event columns as parallel arrays for `unnest` (one parameter per column, any batch size). */
function columnsOf(encoded: readonly EncodedEvent[]): unknown[][] {
  return [
    encoded.map((e) => e.type),
    encoded.map((e) => e.at),
    encoded.map((e) => e.turn),
    encoded.map((e) => e.step),
    encoded.map((e) => e.data),
  ];
}
