/**
 * The one storage interface (ARCHITECTURE "Storage"). Two implementations pass one contract suite:
 * embedded SQLite (`better-sqlite3`, WAL) and PostgreSQL (`pg`).
 *
 * Invariants every implementation keeps:
 * - `append` is atomic and optimistic: it writes seqs `expectedSeq+1 …` only if the session's last seq is
 *   `expectedSeq`; otherwise it writes nothing and throws `AppendConflictError`. Of two concurrent appends at
 *   the same expected seq exactly one wins.
 * - Event `data` is stored as text and read back byte for byte (no `jsonb`).
 * - Inbox items, leases and spilled blobs are rows: a server can die at any moment and lose nothing.
 * - Notifications only accelerate; a consumer that missed one finds the truth by reading rows.
 * - Goals and schedules (P3, S8) are rows too; their claims are atomic conditional updates that queue the
 *   inbox item in the same transaction (see planning-rows.ts).
 */
import type {
  EventType,
  InboxMode,
  InboxQueue,
  LogEvent,
  NewEvent,
  SessionKind,
  UserSource,
} from "../log/events.js";
import type {
  GoalPatch,
  GoalRow,
  NewGoal,
  NewSchedule,
  SchedulePatch,
  ScheduleRow,
} from "./planning-rows.js";
import type { ProcessReceiptStore } from "./process-receipts.js";

export type StoreKind = "sqlite" | "postgres";

export type SessionRow = {
  id: string;
  parentId: string | null;
  kind: SessionKind;
  title: string | null;
  /** `running` while a turn is open (set by the append that writes `turn/start`), `idle` after `turn/end`. */
  status: string;
  archived: boolean;
  /** ISO-8601 UTC. */
  createdAt: string;
  updatedAt: string;
  /** Seq of the last event; 0 for an empty log. */
  lastSeq: number;
  metadata: Record<string, unknown>;
};

export type CreateSessionInput = {
  id?: string;
  parentId?: string | null;
  kind?: SessionKind;
  title?: string | null;
  status?: string;
  metadata?: Record<string, unknown>;
};

export type SessionPatch = {
  title?: string | null;
  status?: string;
  archived?: boolean;
  metadata?: Record<string, unknown>;
};

export type ListSessionsOptions = {
  limit?: number;
  /** Sessions created strictly before this id (ids sort by time): the next page. */
  before?: string;
  includeArchived?: boolean;
  parentId?: string;
  /** Only sessions whose `metadata.workspace` is exactly this directory (a workspace's sessions). */
  workspace?: string;
  /** Only sessions whose id or title contains this text (ASCII letters compared without case). */
  query?: string;
  /**
   * `created` (default): newest id first, paged with `before`. `activity`: the most recently updated first
   * (then the larger id), paged with `after`.
   */
  order?: "created" | "activity";
  /** With `order: "activity"`: the sessions after this one in that order (the previous page's last row). */
  after?: ActivityCursor;
};

/** A place in the by-activity order: a session's `updatedAt` (millisecond ISO-8601) and id. */
export type ActivityCursor = { updatedAt: string; id: string };

export type LatestSessionOptions = {
  /** The directory in the session's `metadata.workspace`. */
  workspace: string;
  includeArchived?: boolean;
};

/** What a driver reads on taking a session's lease (`Store.readForDrive`). */
export type DriveRead = {
  /** The events after the given seq, in order (as `read`). */
  events: LogEvent[];
  /** The pending input (as `pendingInbox`). */
  pending: InboxItem[];
  /** The session row (as `getSession`); undefined when there is no such session. */
  session: SessionRow | undefined;
};

export type EnqueueOptions = { refuseArchived?: boolean };

/**
 * `enqueueAndClaim`: the lease to take for the session (as a claim pass takes it, `claimPendingSessions`),
 * and from which seq the caller wants the events (undefined: none; a driver that will load the log itself).
 */
export type EnqueueClaim = { owner: string; ttlMs: number; after?: number };

/** What `enqueueAndClaim` did: the row, and, when the lease was taken, what a drive reads on taking it. */
export type EnqueuedClaim = { item: InboxItem; claimed: DriveRead | undefined };

export type ReadOptions = {
  /** Events with seq > after (default 0). */
  after?: number;
  /** Events with seq <= upTo. */
  upTo?: number;
  limit?: number;
  types?: readonly EventType[];
};

/**
 * How far an append must get before it returns (L17 and its "Here:": the log is written to the database
 * before every model call, and on disk before anything touches the world).
 * - `disk` (the default): on the database's disk; survives a crash of the database server or the machine.
 * - `commit`: committed, so every process sees it and a crash of any of ours loses nothing; it reaches the
 *   disk a moment later (PostgreSQL: the WAL writer, within about 3 × `wal_writer_delay`; SQLite: the next
 *   synced commit or checkpoint). Both logs are sequential, so a later `disk` append makes every earlier
 *   `commit` append durable too.
 * The store's setting (`store.sqlite_synchronous`, `store.postgres_synchronous_commit`) decides whether the
 * choice is honoured (`effects`, the default) or every append is `disk` (`full`, `on`) or `commit`
 * (`normal`, `off`).
 */
export type AppendDurability = "commit" | "disk";

export type AppendOptions = {
  /** Fencing: write only while this owner holds the live lease `session:<id>` (a lapsed holder is refused). */
  leaseOwner?: string;
  /** Consume these pending inbox items in the same transaction; if any is no longer pending, nothing is written. */
  claimInbox?: readonly string[];
  /** Default `disk`; see `AppendDurability`. */
  durability?: AppendDurability;
  /**
   * With `leaseOwner`: let go of the session lease in the same transaction, once the events are written (a
   * drive's last flush: its release costs no round trip of its own). Nothing written, nothing released.
   */
  releaseLease?: boolean;
};

export type InboxItem = {
  id: string;
  sessionId: string;
  queue: InboxQueue;
  mode: InboxMode;
  source: UserSource;
  text: string;
  createdAt: string;
  metadata: Record<string, unknown>;
};

/**
 * L4: whether pending input opens a turn. Every pending item does except an `inject`, which waits for a
 * turn something else opens. The driver, the server's runner, goal rounds and subagent settlement all ask
 * this one question.
 */
export function opensTurn(pending: readonly Pick<InboxItem, "mode">[]): boolean {
  return pending.some((item) => item.mode !== "inject");
}

export type NewInboxItem = {
  id?: string;
  queue: InboxQueue;
  mode: InboxMode;
  source: UserSource;
  text: string;
  metadata?: Record<string, unknown>;
};

export type Lease = {
  name: string;
  owner: string;
  /** Epoch milliseconds (on PostgreSQL, the server's clock: servers need not agree on time). */
  expiresAt: number;
  /** Increases every time the lease changes hands; a fencing token. */
  fence: number;
};

export type BlobRef = {
  id: string;
  sessionId: string;
  bytes: number;
  createdAt: string;
  metadata: Record<string, unknown>;
};

export type ReadyQueue = { sessions: number; items: number; oldestAt: string | undefined };

export type OrphanClaim = { ids: string[]; nextLapseMs: number | undefined };

export type SubscribeOptions = {
  events?: boolean;
  /**
   * Only this session's notifications (and every `resync`). A process driving many sessions has a
   * subscriber per session; delivering each notification to all of them would cost O(sessions) per append.
   */
  sessionId?: string;
  /**
   * Default true: a `resync` right away once the subscription listens (from then on nothing is missed).
   * False for a subscriber that reads what it watches after subscribing anyway (a drive taking its lease):
   * it still hears every later `resync` (a reconnect, another process's commits).
   */
  initialResync?: boolean;
};

export type StoreNotification =
  | { channel: "events"; sessionId: string; seq: number }
  /**
   * Input was added to (or discarded from) the inbox; a claim is not announced (its events are). `itemId`:
   * the row added by `enqueueInbox` or `requestCancel` (a reader that has already seen it need not read
   * again); `cancel`: that row is a cancel request, so a driver need look for one only then; `claimed`: the
   * row came with its session's claim (`enqueueAndClaim`), so no other server need make a claim pass for it.
   */
  | { channel: "inbox"; sessionId: string; itemId?: string; cancel?: true; claimed?: true }
  /** The listener reconnected, or another process changed the database: re-read whatever you watch. */
  | { channel: "resync" };

export type FollowOptions = { after?: number; signal?: AbortSignal };

export interface Store {
  readonly kind: StoreKind;
  /** Where the data lives, safe to print: a file path, or a URL without its password. */
  readonly location: string;

  /** Applies pending migrations once; safe when several processes start together. */
  migrate(): Promise<void>;
  close(): Promise<void>;

  createSession(input?: CreateSessionInput): Promise<SessionRow>;
  getSession(id: string): Promise<SessionRow | undefined>;
  listSessions(options?: ListSessionsOptions): Promise<SessionRow[]>;
  updateSession(id: string, patch: SessionPatch): Promise<SessionRow>;
  /**
   * The id of the one session whose id starts with `prefix`; an exact id wins. Several matches
   * throw `AmbiguousSessionIdError` (naming up to 5), none `SessionNotFoundError` (session-ids.ts).
   */
  resolveSessionId(prefix: string): Promise<string>;
  /**
   * `--continue`: the most recently updated session a person can continue (kind `main` or `fork`)
   * in this workspace; archived ones only when asked.
   */
  latestSession(options: LatestSessionOptions): Promise<SessionRow | undefined>;
  /** For each id, its shortest prefix of at least `minLength` (default 8) that no other session id shares. */
  uniqueIdPrefixes(ids: readonly string[], minLength?: number): Promise<Map<string, string>>;

  /** Returns the stored events as `read` gives them; each one's `data` is the object given, not a copy. */
  append(
    sessionId: string,
    events: readonly NewEvent[],
    expectedSeq: number,
    options?: AppendOptions,
  ): Promise<LogEvent[]>;
  read(sessionId: string, options?: ReadOptions): Promise<LogEvent[]>;
  /**
   * What a driver reads on taking the session's lease, at one moment and in one round trip: the events
   * after `after`, the pending input and the session row (`DriveRead`).
   */
  readForDrive(sessionId: string, after: number): Promise<DriveRead>;
  /** Yields events after `after` as they are appended, from any process, until the signal aborts. */
  follow(sessionId: string, options?: FollowOptions): AsyncIterable<LogEvent>;

  /**
   * Queues input; an unknown session is SessionNotFoundError. `refuseArchived`: an archived session is
   * SessionArchivedError, checked in the same statement (the API's message route, one round trip).
   */
  enqueueInbox(sessionId: string, item: NewInboxItem, options?: EnqueueOptions): Promise<InboxItem>;
  /**
   * `enqueueInbox`, and in the same transaction the session's lease for `claim.owner` when no one else holds
   * it live (the server that received a message drives it at once: queue, claim and the drive's first read
   * in one round trip). Taken, the session's pending cancel requests are consumed (as a claim pass does) and
   * `claimed` holds, read after the lease was taken, the events after `claim.after` (none when undefined),
   * the pending input (the new row among it) and the session row. Not taken: the row waits like any other.
   */
  enqueueAndClaim(
    sessionId: string,
    item: NewInboxItem,
    claim: EnqueueClaim,
    options?: EnqueueOptions,
  ): Promise<EnqueuedClaim>;
  /** Pending (unclaimed, undiscarded) input items in arrival order (cancel requests are not input). */
  pendingInbox(sessionId: string): Promise<InboxItem[]>;
  /** Drops pending items without consuming them (L7 cancel clears the inbox); returns how many. */
  discardInbox(sessionId: string, ids: readonly string[]): Promise<number>;
  /**
   * L7 from another server: asks whoever drives the session to cancel its turn. The request
   * is an inbox row of its own kind (not input): announced like input on the `inbox` channel, but never
   * returned by `pendingInbox`, never claimable into the log, and it never makes a session claimable.
   */
  requestCancel(sessionId: string): Promise<void>;
  /**
   * A named secret every process on this store shares (the subagent handles' HMAC key): 32 random
   * bytes, base64, made by whichever process asks first. Never exposed through events or the API.
   */
  harnessKey(name: string): Promise<string>;
  /** Consumes the session's pending cancel requests (the driver's, before it cancels); returns how many. */
  takeCancelRequests(sessionId: string): Promise<number>;
  /**
   * Takes the session lease (`session:<id>`) of up to `limit` sessions that have pending turn input
   * (a follow-up or steer; injects never open a turn) and no live holder, oldest input first, and returns
   * their ids. One statement: concurrent claimers (other servers) never get the same session, and a lapsed
   * holder's session is taken over with the next fence. A claimed session's pending cancel requests are
   * consumed with it (no one was driving it: they came too late), so its new driver need not take them.
   */
  claimPendingSessions(owner: string, ttlMs: number, limit: number): Promise<string[]>;
  /**
   * R1, L9: takes the session lease of up to `limit` sessions whose log has an open turn
   * (a `turn/start` with no `turn/end` after it) and no live holder: whoever drove that turn died, or gave
   * the lease up, without closing it. The claimer's Agent closes the turn honestly on taking the lease and
   * starts nothing (no new input, no auto-continue). Same one-statement guarantees as
   * `claimPendingSessions`. `nextLapseMs`: how long until the soonest live session lease lapses (undefined:
   * none), so a claimer can look again the moment a dead driver's lease runs out.
   */
  claimOrphanedSessions(owner: string, ttlMs: number, limit: number): Promise<OrphanClaim>;
  /**
   * For metrics: the ready queue across all servers: sessions with pending turn input, how many such
   * rows wait, and when the oldest was queued (ISO-8601; undefined when nothing waits). One indexed read.
   */
  readyQueue(): Promise<ReadyQueue>;

  /**
   * Takes the lease if it is free, released, lapsed, or already this owner's (then it is extended).
   * `fence` grows by one whenever the holder changes. Undefined when another owner holds it live.
   */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<Lease | undefined>;
  /**
   * Extends the owner's lease. A lease that lapsed but that nobody took over can still be renewed by its
   * owner (no one else can have acted under it); undefined once released or taken over.
   */
  renewLease(name: string, owner: string, ttlMs: number): Promise<Lease | undefined>;
  /** Gives the lease up (only its owner can); the row stays, so the next holder's fence still grows. */
  releaseLease(name: string, owner: string): Promise<boolean>;
  /** The live holder, or undefined when the lease is free, released or lapsed. */
  getLease(name: string): Promise<Lease | undefined>;

  putBlob(
    sessionId: string,
    content: Uint8Array | string,
    metadata?: Record<string, unknown>,
  ): Promise<BlobRef>;
  getBlob(id: string): Promise<{ ref: BlobRef; content: Buffer } | undefined>;
  /** The bytes of every blob the session holds (0 for none or an unknown session): what spill quotas count. */
  sessionBlobBytes(sessionId: string): Promise<number>;

  /**
   * Listen to wake-ups from this and other processes; returns the unsubscribe function. A subscriber's
   * first notification is a `resync` sent once its subscription is live (on PostgreSQL, once the listener
   * LISTENs): whatever commits after that is announced. `events` notifications reach only subscribers that
   * ask for them (`{ events: true }`, as `follow` does): a server that follows no session is not told of
   * every append in the fleet.
   */
  subscribe(listener: (notification: StoreNotification) => void, options?: SubscribeOptions): () => void;

  /** Goals and schedules (P3–P5, S8): a part of the store of its own, so a plugin can be given just it. */
  readonly planning: PlanningStore;
  /** Background jobs' checkpoints and receipts (store/process-receipts.ts). */
  readonly processReceipts: ProcessReceiptStore;
}

/**
 * Other sessions, as an orchestrator of delegated work sees them (S1–S5): create and fork children, read
 * their rows and logs, queue input to a parent or a child, ask a child to stop. No claims, no leases taken,
 * no blobs: those belong to whoever drives a session.
 */
export type SessionDirectory = Pick<
  Store,
  | "kind"
  | "createSession"
  | "getSession"
  | "listSessions"
  | "updateSession"
  | "read"
  | "append"
  | "enqueueInbox"
  | "pendingInbox"
  | "discardInbox"
  | "requestCancel"
  | "takeCancelRequests"
  | "getLease"
  | "harnessKey"
  | "subscribe"
>;

/** Goals and schedules (a sub-interface, not forwarded method by method). */
export interface PlanningStore {
  // ---- goals (P3–P5): at most one per session, compare-and-set by revision ----

  /** Creates the session's goal (revision 1, active, round 0); replaces a complete one; else GoalExistsError. */
  createGoal(sessionId: string, goal: NewGoal): Promise<GoalRow>;
  getGoal(sessionId: string): Promise<GoalRow | undefined>;
  /** Applies the patch only if the goal is still `{id, revision}`; undefined when it changed meanwhile. */
  updateGoal(
    sessionId: string,
    expected: { id: string; revision: number },
    patch: GoalPatch,
  ): Promise<GoalRow | undefined>;
  deleteGoal(sessionId: string): Promise<boolean>;
  /**
   * P4 "claim round N": advances `roundsStarted` from N-1 to N while the goal `id` is active and N is within
   * its cap, and queues `item` in the same transaction. Undefined (nothing written) when another process
   * claimed it, or the goal changed.
   */
  claimGoalRound(
    sessionId: string,
    expected: { id: string; round: number },
    item: NewInboxItem,
  ): Promise<{ goal: GoalRow; item: InboxItem } | undefined>;

  // ---- schedules (S8) ----

  createSchedule(sessionId: string, schedule: NewSchedule): Promise<ScheduleRow>;
  getSchedule(id: string): Promise<ScheduleRow | undefined>;
  listSchedules(sessionId: string): Promise<ScheduleRow[]>;
  updateSchedule(id: string, patch: SchedulePatch): Promise<ScheduleRow | undefined>;
  deleteSchedule(id: string): Promise<boolean>;
  /** Schedules whose next occurrence is at or before `nowMs`, earliest first. */
  dueSchedules(nowMs: number, limit?: number): Promise<ScheduleRow[]>;
  /**
   * "Claim occurrence T": moves `nextAt` from `expectedNextAt` to `nextAt`, records `occurrenceAt`, and queues
   * `item` into the schedule's session, all or nothing. Undefined when another process claimed it first.
   */
  claimScheduleOccurrence(
    id: string,
    claim: { expectedNextAt: number; occurrenceAt: number; nextAt: number | null },
    item: NewInboxItem,
  ): Promise<InboxItem | undefined>;
}

export class StoreError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Another writer appended first (or the expected seq is wrong). Nothing was written. */
export class AppendConflictError extends StoreError {
  constructor(
    readonly sessionId: string,
    readonly expectedSeq: number,
    readonly actualSeq: number,
  ) {
    super(
      "APPEND_CONFLICT",
      `append to session ${sessionId} expected seq ${expectedSeq}, but it is at ${actualSeq}`,
    );
  }
}

/** `leaseOwner` was given and does not hold the session's live lease. Nothing was written. */
export class LeaseLostError extends StoreError {
  constructor(
    readonly sessionId: string,
    readonly owner: string,
  ) {
    super("LEASE_LOST", `owner ${owner} does not hold the lease of session ${sessionId}`);
  }
}

/** `claimInbox` named an item that is no longer pending. Nothing was written. */
export class InboxClaimError extends StoreError {
  constructor(
    readonly sessionId: string,
    readonly ids: readonly string[],
  ) {
    super("INBOX_CLAIMED", `inbox items already taken in session ${sessionId}: ${ids.join(", ")}`);
  }
}

export class SessionNotFoundError extends StoreError {
  constructor(readonly sessionId: string) {
    super("SESSION_NOT_FOUND", `no session ${sessionId}`);
  }
}

/** `enqueueInbox` with `refuseArchived` found the session archived (L18). */
export class SessionArchivedError extends StoreError {
  constructor(readonly sessionId: string) {
    super("ARCHIVED", `session ${sessionId} is archived`);
  }
}

export function sessionLeaseName(sessionId: string): string {
  return `session:${sessionId}`;
}
