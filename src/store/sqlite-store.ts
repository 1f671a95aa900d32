/**
 * The embedded store: one SQLite file (`$BDSH_HOME/bdsh.db`) through `better-sqlite3`.
 *
 * Invariants:
 * - Each call is one short transaction: the loop's durability points (L17) are appends, and a step's events
 *   land together or not at all. The expected-seq check is also what makes `compaction/start` a lock (C9).
 * - WAL with a `busy_timeout`, and every multi-statement write is a short `BEGIN IMMEDIATE` transaction:
 *   two `bdsh` processes on one home wait for each other's write lock instead of failing with SQLITE_BUSY
 *   (a deferred transaction that upgrades from read to write can fail without waiting).
 * - `append` checks the session's `last_seq`, the lease (when fenced) and the inbox claims, then writes, all
 *   inside one IMMEDIATE transaction: it writes everything or nothing (a `releaseLease` lets go of the
 *   session lease in that transaction, after the writes).
 * - Group commit: the appends and the claimed messages (`enqueueAndClaim`) made in one turn of the event
 *   loop share one IMMEDIATE transaction, each in a savepoint of its own, so each is stored or refused as
 *   alone, and one commit (one fsync) serves them all.
 * - Durability: the connection runs `synchronous=NORMAL`, SQLite's recommendation for WAL: every commit is
 *   in the WAL before it returns, so a killed process (SIGKILL, the crash matrix) loses nothing, and the
 *   file is never corrupted; a power loss or OS crash may roll back the last commits. With `effects` (the
 *   default) an append asking for `disk` durability (before a tool touches the world, at a turn's end) runs
 *   under `FULL`, which fsyncs the WAL and so every earlier commit with it; an fsync costs ~0.2–1 ms here.
 *   `full` fsyncs every commit, `normal` none (`store.sqlite_synchronous`).
 * - Leases use this machine's clock (`Date.now()`): every process sharing the file shares the clock.
 * - Notifications: this process's own writes are announced at once; other processes' commits are noticed
 *   by polling `PRAGMA data_version` (it changes only when another connection commits) while someone is
 *   subscribed, and announced as `resync`. The poll timer is `unref`'d and stops with the last subscriber.
 */
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import type { LogEvent, NewEvent } from "../log/events.js";
import { followEvents } from "./follow.js";
import { SQLITE_MIGRATIONS } from "./migrations.js";
import { NotificationHub } from "./notification-hub.js";
import { SqliteProcessReceipts } from "./process-receipts.js";
import {
  appendedEvents,
  type BlobRecord,
  blobBytes,
  cancelRequestValues,
  checkLimit,
  checkTtl,
  DEFAULT_LIST_LIMIT,
  type EventRecord,
  type InboxRecord,
  type InboxRowValues,
  isoNow,
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
import { SqlitePlanning } from "./sqlite-planning.js";
import { type SqliteStatements, sqliteStatements } from "./sqlite-statements.js";
import { StatementCombiner } from "./statement-combiner.js";
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

export type SqliteStoreOptions = {
  /** How often to look for other processes' commits while subscribed (default 200 ms). */
  pollIntervalMs?: number;
  /** Default `effects`; see the header. */
  synchronous?: SqliteSynchronous;
  busyTimeoutMs?: number;
};

export type SqliteSynchronous = "full" | "effects" | "normal";

/**
 * A write of the hot path (an append, a message with its claim): its statements run in the batch's
 * transaction, in a savepoint of their own, so one that throws (a refused seq, lease or claim) rolls back
 * alone; `committed` runs after the commit, for a write that was stored (its announcement).
 */
type BatchedWrite<R = unknown> = {
  /** Whether it asks for `disk` durability (AppendDurability). */
  disk: boolean;
  run(): R;
  committed(result: R): void;
};

/** `fn`'s outcome as a settled result: a nested transaction that throws has rolled back to its savepoint. */
function settled<R>(fn: () => R): PromiseSettledResult<R> {
  try {
    return { status: "fulfilled", value: fn() };
  } catch (reason) {
    return { status: "rejected", reason };
  }
}

type LeaseRecord = { name: string; owner: string; expires_at: number; fence: number };

export class SqliteStore implements Store {
  readonly kind = "sqlite";
  readonly location: string;
  private readonly db: Database.Database;
  private readonly hub: NotificationHub;
  private readonly pollIntervalMs: number;
  private statements: SqliteStatements | undefined;
  private poll: NodeJS.Timeout | undefined;
  private dataVersion = 0;
  readonly planning: SqlitePlanning;
  readonly processReceipts: SqliteProcessReceipts;
  /** `effects`: an append asking for `disk` durability commits under `synchronous=FULL`. */
  private readonly honourDurability: boolean;
  /** `work` in a transaction (a savepoint inside one), wrapped once: better-sqlite3 builds five wrappers per `transaction()`. */
  private readonly atomic: Database.Transaction<(work: () => unknown) => unknown>;
  /**
   * Group commit: the appends and claimed messages of one event-loop turn share a transaction and its fsync
   * (a burst of a thousand messages, or of a thousand turns ending, is a few commits, not a thousand).
   */
  private readonly writes = new StatementCombiner<BatchedWrite, unknown>({
    run: async (batch) => this.runBatch(batch),
    inFlight: 1,
    maxWrites: 256,
    maxBytes: Number.POSITIVE_INFINITY,
    gather: "immediate",
  });

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.location = path;
    this.pollIntervalMs = options.pollIntervalMs ?? 200;
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.db = new Database(path, { timeout: busyTimeoutMs });
    this.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    this.db.pragma("foreign_keys = ON");
    this.honourDurability = (options.synchronous ?? "effects") === "effects";
    this.db.pragma(`synchronous = ${options.synchronous === "full" ? "FULL" : "NORMAL"}`);
    // Changing the journal mode needs a moment of exclusive access; two processes opening a fresh file
    // together can both ask, and the busy handler does not cover it, so retry briefly.
    retryBusy(() => this.db.pragma("journal_mode = WAL"));
    this.atomic = this.db.transaction((work: () => unknown) => work());
    this.hub = new NotificationHub({ onFirst: () => this.startPoll(), onLast: () => this.stopPoll() });
    this.planning = new SqlitePlanning(this.db, (sessionId) =>
      this.hub.emit({ channel: "inbox", sessionId }),
    );
    this.processReceipts = new SqliteProcessReceipts(this.db);
  }

  async migrate(): Promise<void> {
    const run = this.db.transaction(() => {
      this.db.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
      );
      const applied = new Set(
        this.db
          .prepare("SELECT version FROM schema_migrations")
          .pluck()
          .all()
          .map((v) => Number(v)),
      );
      for (const m of SQLITE_MIGRATIONS) {
        if (applied.has(m.version)) continue;
        this.db.exec(m.sql);
        this.db
          .prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)")
          .run(m.version, m.name, isoNow());
      }
    });
    run.immediate();
  }

  async close(): Promise<void> {
    this.stopPoll();
    await this.writes.idle(); // writes made before close are stored, not failed by it
    if (this.db.open) this.db.close();
  }

  async createSession(input?: CreateSessionInput): Promise<SessionRow> {
    const v = newSessionValues(input);
    const now = isoNow();
    try {
      const row = this.s.insertSession.get({ ...v, now }) as SessionRecord;
      return toSession(row);
    } catch (error) {
      if (isConstraint(error, "SQLITE_CONSTRAINT_PRIMARYKEY")) {
        throw new StoreError("SESSION_EXISTS", `session ${v.id} already exists`);
      }
      throw error;
    }
  }

  async getSession(id: string): Promise<SessionRow | undefined> {
    const row = this.s.getSession.get(id) as SessionRecord | undefined;
    return row && toSession(row);
  }

  async listSessions(options: ListSessionsOptions = {}): Promise<SessionRow[]> {
    const { query, after } = listingFilters(options);
    const common = {
      all: options.includeArchived ? 1 : 0,
      parent: options.parentId ?? null,
      workspace: options.workspace ?? null,
      limit: options.limit ?? DEFAULT_LIST_LIMIT,
    };
    if (options.order === "activity") {
      const rows = this.s.listByActivity.all({
        ...common,
        query,
        afterAt: after?.updatedAt ?? null,
        afterId: after?.id ?? null,
      }) as SessionRecord[];
      return rows.map(toSession);
    }
    // The children's statement has no text filter: a query goes through the general one.
    const statement =
      options.parentId === undefined || query !== null ? this.s.listSessions : this.s.listChildren;
    const rows = statement.all({ ...common, before: options.before ?? null, query }) as SessionRecord[];
    return rows.map(toSession);
  }

  async resolveSessionId(prefix: string): Promise<string> {
    const { low, high } = prefixRange(prefix);
    return pickSessionId(prefix, this.s.sessionIdsInRange.all(low, high, MAX_CANDIDATES + 1) as string[]);
  }

  async latestSession(options: LatestSessionOptions): Promise<SessionRow | undefined> {
    const row = this.s.latestSession.get({
      workspace: options.workspace,
      all: options.includeArchived ? 1 : 0,
    }) as SessionRecord | undefined;
    return row && toSession(row);
  }

  async uniqueIdPrefixes(ids: readonly string[], minLength?: number): Promise<Map<string, string>> {
    const prefixes = new Map<string, string>();
    for (const id of ids) {
      const previous = (this.s.previousSessionId.get(id) as string | null) ?? null;
      const next = (this.s.nextSessionId.get(id) as string | null) ?? null;
      prefixes.set(id, uniquePrefix(id, { previous, next }, minLength));
    }
    return prefixes;
  }

  async updateSession(id: string, patch: SessionPatch): Promise<SessionRow> {
    const row = this.s.updateSession.get({
      id,
      setTitle: patch.title !== undefined ? 1 : 0,
      title: patch.title ?? null,
      status: patch.status ?? null,
      archived: patch.archived === undefined ? null : patch.archived ? 1 : 0,
      metadata: patch.metadata === undefined ? null : JSON.stringify(patch.metadata),
      now: isoNow(),
    }) as SessionRecord | undefined;
    if (!row) throw new SessionNotFoundError(id);
    return toSession(row);
  }

  async append(
    sessionId: string,
    events: readonly NewEvent[],
    expectedSeq: number,
    options: AppendOptions = {},
  ): Promise<LogEvent[]> {
    const append = prepareAppend(sessionId, events, expectedSeq, options);
    await this.batched(sessionId, {
      disk: append.disk,
      run: () => this.writeAppend(append),
      committed: () =>
        this.hub.emit({ channel: "events", sessionId, seq: expectedSeq + append.encoded.length }),
    });
    return appendedEvents(sessionId, expectedSeq, events, append.encoded);
  }

  /** `write` through the group commit (`writes`); one session's writes keep their order. */
  private batched<R>(sessionId: string, write: BatchedWrite<R>): Promise<R> {
    return this.writes.submit(write as BatchedWrite, sessionId, 1) as Promise<R>;
  }

  /**
   * The writes gathered in one turn of the event loop, in one IMMEDIATE transaction: each in a savepoint
   * of its own, so one that is refused (seq, lease, claim) or fails rolls back alone, and one commit, so at
   * most one fsync (under `FULL` when any of them asked for `disk`) for all of them. Each stored write is
   * announced after the commit.
   */
  private runBatch(batch: readonly BatchedWrite[]): PromiseSettledResult<unknown>[] {
    // `FULL` only where the store honours the durability asked for (`effects`); `full` always runs it.
    const disk = this.honourDurability && batch.some((w) => w.disk);
    // `exec`, not `pragma`: nothing to read back (a prepared PRAGMA statement takes effect when prepared,
    // not reliably when run, so it cannot be kept).
    if (disk) this.db.exec("PRAGMA synchronous = FULL");
    let results: PromiseSettledResult<unknown>[];
    try {
      results =
        batch.length === 1
          ? [settled(() => this.atomic.immediate(batch[0]!.run))]
          : (this.atomic.immediate(() =>
              batch.map((w) => {
                const result = settled(() => this.atomic(w.run));
                // An I/O or disk-full error may roll back the whole transaction, not only the savepoint:
                // then nothing of the batch is stored, and every write of it fails.
                if (!this.db.inTransaction)
                  throw result.status === "rejected"
                    ? result.reason
                    : new StoreError("ROLLED_BACK", "the write batch's transaction was rolled back");
                return result;
              }),
            ) as PromiseSettledResult<unknown>[]);
    } finally {
      if (disk) this.db.exec("PRAGMA synchronous = NORMAL");
    }
    batch.forEach((w, i) => {
      const result = results[i]!;
      if (result.status === "fulfilled") w.committed(result.value);
    });
    return results;
  }

  async read(sessionId: string, options: ReadOptions = {}): Promise<LogEvent[]> {
    checkLimit(options.limit);
    const params = {
      id: sessionId,
      after: options.after ?? 0,
      upTo: options.upTo ?? Number.MAX_SAFE_INTEGER,
      limit: options.limit ?? -1,
    };
    const rows = (
      options.types
        ? this.s.readTypes.all({ ...params, types: JSON.stringify(options.types) })
        : this.s.read.all(params)
    ) as EventRecord[];
    return rows.map(toEvent);
  }

  async readForDrive(sessionId: string, after: number): Promise<DriveRead> {
    // One read transaction: the three reads see the same moment, as PostgreSQL's one statement does.
    return this.atomic.deferred(() => this.readDrive(sessionId, after)) as DriveRead;
  }

  /** `readForDrive`'s reads, inside the caller's transaction; no events when `after` is undefined. */
  private readDrive(sessionId: string, after: number | undefined): DriveRead {
    const events =
      after === undefined
        ? []
        : (this.s.read.all({
            id: sessionId,
            after,
            upTo: Number.MAX_SAFE_INTEGER,
            limit: -1,
          }) as EventRecord[]);
    const pending = this.s.pendingInbox.all(sessionId) as InboxRecord[];
    const session = this.s.getSession.get(sessionId) as SessionRecord | undefined;
    return {
      events: events.map(toEvent),
      pending: pending.map(toInboxItem),
      session: session && toSession(session),
    };
  }

  follow(sessionId: string, options?: FollowOptions): AsyncIterable<LogEvent> {
    return followEvents(this, sessionId, options);
  }

  async enqueueInbox(
    sessionId: string,
    item: NewInboxItem,
    options: EnqueueOptions = {},
  ): Promise<InboxItem> {
    return toInboxItem(this.insertInbox(sessionId, newInboxValues(item), options.refuseArchived ?? false));
  }

  async enqueueAndClaim(
    sessionId: string,
    item: NewInboxItem,
    claim: EnqueueClaim,
    options: EnqueueOptions = {},
  ): Promise<EnqueuedClaim> {
    checkTtl(claim.ttlMs);
    const values = newInboxValues(item);
    // One transaction (shared with the writes of this turn of the event loop): the row, the lease, the
    // cancel requests and the drive's read.
    const { row, claimed } = await this.batched(sessionId, {
      disk: false,
      run: () => {
        const row = this.insertInbox(sessionId, values, options.refuseArchived ?? false, false);
        if (this.takeClaimed([sessionId], claim.owner, Date.now(), claim.ttlMs).length === 0)
          return { row, claimed: undefined };
        return { row, claimed: this.readDrive(sessionId, claim.after) };
      },
      // After the commit, as PostgreSQL's NOTIFY.
      committed: ({ row, claimed }) =>
        this.announceInbox(sessionId, row.id, values.mode, claimed !== undefined),
    });
    return { item: toInboxItem(row), claimed };
  }

  /**
   * One inbox row (input or a cancel request), announced; an unknown session is SessionNotFoundError, an
   * archived one (when refused) SessionArchivedError.
   */
  private insertInbox(
    sessionId: string,
    values: InboxRowValues,
    refuseArchived = false,
    announce = true,
  ): InboxRecord {
    const row = this.s.insertInbox.get({
      ...values,
      sessionId,
      now: isoNow(),
      refuseArchived: refuseArchived ? 1 : 0,
    }) as InboxRecord | undefined;
    if (!row) {
      if (refuseArchived && this.s.getSession.get(sessionId)) throw new SessionArchivedError(sessionId);
      throw new SessionNotFoundError(sessionId);
    }
    if (announce) this.announceInbox(sessionId, row.id, values.mode);
    return row;
  }

  private announceInbox(sessionId: string, itemId: string, mode: string, claimed = false): void {
    this.hub.emit({
      channel: "inbox",
      sessionId,
      itemId,
      ...(mode === "cancel" ? { cancel: true as const } : {}),
      ...(claimed ? { claimed: true as const } : {}),
    });
  }

  async pendingInbox(sessionId: string): Promise<InboxItem[]> {
    return (this.s.pendingInbox.all(sessionId) as InboxRecord[]).map(toInboxItem);
  }

  async discardInbox(sessionId: string, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const { changes } = this.s.discardInbox.run(isoNow(), sessionId, JSON.stringify(uniqueIds(ids)));
    if (changes > 0) this.hub.emit({ channel: "inbox", sessionId });
    return changes;
  }

  async requestCancel(sessionId: string): Promise<void> {
    this.insertInbox(sessionId, cancelRequestValues());
  }

  async harnessKey(name: string): Promise<string> {
    this.db
      .prepare(
        "INSERT INTO harness_keys (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
      )
      .run(name, randomBytes(32).toString("base64"), isoNow());
    return this.db.prepare("SELECT value FROM harness_keys WHERE name = ?").pluck().get(name) as string;
  }

  async takeCancelRequests(sessionId: string): Promise<number> {
    if (this.s.hasCancelRequest.get(sessionId) === undefined) return 0;
    return this.s.takeCancelRequests.run(isoNow(), sessionId).changes;
  }

  async claimPendingSessions(owner: string, ttlMs: number, limit: number): Promise<string[]> {
    checkTtl(ttlMs);
    if (limit <= 0) return [];
    checkLimit(limit);
    const claim = this.db.transaction(() => {
      const now = Date.now();
      const ids = this.s.claimCandidates.all(now, limit) as string[];
      return this.takeClaimed(ids, owner, now, ttlMs);
    });
    return claim.immediate();
  }

  async readyQueue(): Promise<ReadyQueue> {
    const row = this.db
      .prepare(
        `SELECT count(*) AS sessions, coalesce(sum(r.waiting), 0) AS items,
           (SELECT min(i.created_at) FROM inbox i WHERE i.position IN (SELECT position FROM ready_sessions)) AS oldest
         FROM ready_sessions r`,
      )
      .get() as { sessions: number; items: number; oldest: string | null };
    return { sessions: row.sessions, items: row.items, oldestAt: row.oldest ?? undefined };
  }

  async claimOrphanedSessions(owner: string, ttlMs: number, limit: number): Promise<OrphanClaim> {
    checkTtl(ttlMs);
    checkLimit(limit);
    const claim = this.db.transaction(() => {
      const now = Date.now();
      const candidates = limit > 0 ? (this.s.orphanCandidates.all(now, limit) as string[]) : [];
      const ids = this.takeClaimed(candidates, owner, now, ttlMs);
      const lapse = this.s.nextOrphanLapse.get(now) as number | null;
      return { ids, nextLapseMs: lapse == null ? undefined : Math.max(0, lapse - now) };
    });
    return claim.immediate();
  }

  /**
   * Inside a claim's transaction: the session leases of `ids` that `owner` can take, taken; each claimed
   * session's pending cancel requests are consumed with it (Store `claimPendingSessions`).
   */
  private takeClaimed(ids: readonly string[], owner: string, now: number, ttlMs: number): string[] {
    const claimed = ids.filter((id) =>
      this.s.acquireLease.get({ name: sessionLeaseName(id), owner, now, expires: now + ttlMs }),
    );
    const at = new Date(now).toISOString();
    for (const id of claimed)
      if (this.s.hasCancelRequest.get(id) !== undefined) this.s.takeCancelRequests.run(at, id);
    return claimed;
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<Lease | undefined> {
    checkTtl(ttlMs);
    const now = Date.now();
    const row = this.s.acquireLease.get({ name, owner, now, expires: now + ttlMs }) as
      | LeaseRecord
      | undefined;
    return row && toLease(row);
  }

  async renewLease(name: string, owner: string, ttlMs: number): Promise<Lease | undefined> {
    checkTtl(ttlMs);
    const row = this.s.renewLease.get(Date.now() + ttlMs, name, owner) as LeaseRecord | undefined;
    return row && toLease(row);
  }

  async releaseLease(name: string, owner: string): Promise<boolean> {
    return this.s.releaseLease.run(Date.now(), name, owner).changes > 0;
  }

  async getLease(name: string): Promise<Lease | undefined> {
    const row = this.s.getLease.get(name, Date.now()) as LeaseRecord | undefined;
    return row && toLease(row);
  }

  async putBlob(
    sessionId: string,
    content: Uint8Array | string,
    metadata: Record<string, unknown> = {},
  ): Promise<BlobRef> {
    const bytes = blobBytes(content);
    try {
      const row = this.s.insertBlob.get(
        newId(),
        sessionId,
        bytes.length,
        bytes,
        JSON.stringify(metadata),
        isoNow(),
      );
      return toBlobRef(row as BlobRecord);
    } catch (error) {
      if (isConstraint(error, "SQLITE_CONSTRAINT_FOREIGNKEY")) throw new SessionNotFoundError(sessionId);
      throw error;
    }
  }

  async getBlob(id: string): Promise<{ ref: BlobRef; content: Buffer } | undefined> {
    const row = this.s.getBlob.get(id) as (BlobRecord & { content: Buffer }) | undefined;
    return row && { ref: toBlobRef(row), content: row.content };
  }

  async sessionBlobBytes(sessionId: string): Promise<number> {
    return Number((this.s.sessionBlobBytes.get(sessionId) as { total: number | bigint }).total);
  }

  /** The new subscriber first gets a `resync`: "you are subscribed; read what you watch". */
  subscribe(listener: (notification: StoreNotification) => void, options?: SubscribeOptions): () => void {
    const unsubscribe = this.hub.add(listener, options);
    let active = true;
    if (options?.initialResync !== false) queueMicrotask(() => active && listener({ channel: "resync" }));
    return () => {
      active = false;
      unsubscribe();
    };
  }

  /** An append's checks and writes, as the header says (inside the batch's transaction, `runBatch`). */
  private writeAppend(append: PreparedAppend): void {
    const { sessionId, encoded, expectedSeq, claims, release, title, turnOpen } = append;
    const leaseOwner = append.owner ?? undefined;
    const s = this.s;
    const lastSeq = s.lastSeq.get(sessionId) as number | undefined;
    if (lastSeq === undefined) throw new SessionNotFoundError(sessionId);
    if (leaseOwner !== undefined) {
      const held = s.leaseHeld.get(sessionLeaseName(sessionId), leaseOwner, Date.now());
      if (!held) throw new LeaseLostError(sessionId, leaseOwner);
    }
    if (lastSeq !== expectedSeq) throw new AppendConflictError(sessionId, expectedSeq, lastSeq);
    const now = isoNow();
    if (claims.length > 0) {
      const claimed = s.claimInbox.all(now, expectedSeq + 1, sessionId, JSON.stringify(claims)) as string[];
      if (claimed.length !== claims.length) {
        const taken = new Set(claimed);
        throw new InboxClaimError(
          sessionId,
          claims.filter((id) => !taken.has(id)),
        );
      }
    }
    encoded.forEach((e, i) => {
      s.insertEvent.run(sessionId, expectedSeq + 1 + i, e.type, e.at, e.turn, e.step, e.data);
    });
    s.advanceSession.run({
      seq: expectedSeq + encoded.length,
      now,
      open: turnOpen === null ? null : turnOpen ? 1 : 0,
      title,
      id: sessionId,
    });
    if (release && leaseOwner !== undefined)
      s.releaseLease.run(Date.now(), sessionLeaseName(sessionId), leaseOwner);
  }

  /** Statements are prepared on first use: the tables exist only after `migrate()`. */
  private get s(): SqliteStatements {
    this.statements ??= sqliteStatements(this.db);
    return this.statements;
  }

  private startPoll(): void {
    if (this.poll || !this.db.open) return;
    this.dataVersion = this.readDataVersion();
    this.poll = setInterval(() => {
      if (!this.db.open) return this.stopPoll();
      const version = this.readDataVersion();
      if (version === this.dataVersion) return;
      this.dataVersion = version;
      this.hub.emit({ channel: "resync" });
    }, this.pollIntervalMs);
    this.poll.unref();
  }

  private stopPoll(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }

  private readDataVersion(): number {
    return Number(this.db.pragma("data_version", { simple: true }));
  }
}

function toLease(row: LeaseRecord): Lease {
  return { name: row.name, owner: row.owner, expiresAt: row.expires_at, fence: row.fence };
}

function isConstraint(error: unknown, code: string): boolean {
  return error instanceof Database.SqliteError && error.code === code;
}

function retryBusy(action: () => unknown): void {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      action();
      return;
    } catch (error) {
      const busy = error instanceof Database.SqliteError && error.code.startsWith("SQLITE_BUSY");
      if (!busy || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}
