/**
 * The SQLite store's statements, prepared once per connection (after migration). Sets of ids and types are
 * passed as one JSON array and expanded with `json_each`, so every statement has a fixed text.
 */
import type Database from "better-sqlite3";

const SESSION_COLUMNS =
  "id, parent_id, kind, title, status, archived, created_at, updated_at, last_seq, metadata";
const INBOX_COLUMNS = "id, session_id, queue, mode, source, text, metadata, created_at";
const LEASE_COLUMNS = "name, owner, expires_at, fence";
const PENDING = "claimed_at IS NULL AND discarded_at IS NULL";
/** Pending input; a cancel request (mode `cancel`, rows.ts) is not input. */
const PENDING_INPUT = `${PENDING} AND mode <> 'cancel'`;

export const SQLITE_SQL = {
  insertSession: `INSERT INTO sessions (id, parent_id, kind, title, status, archived, created_at, updated_at, last_seq, metadata)
       VALUES (@id, @parentId, @kind, @title, @status, 0, @now, @now, 0, @metadata) RETURNING ${SESSION_COLUMNS}`,
  getSession: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`,
  listSessions: `SELECT ${SESSION_COLUMNS} FROM sessions
       WHERE (@before IS NULL OR id < @before) AND (@all = 1 OR archived = 0)
         AND (@parent IS NULL OR parent_id = @parent)
         AND (@workspace IS NULL OR json_extract(metadata, '$.workspace') = @workspace)
         AND (@query IS NULL OR instr(lower(id), @query) > 0 OR instr(lower(coalesce(title, '')), @query) > 0)
       ORDER BY id DESC LIMIT @limit`,
  // The same filters, most recently active first; the page after (@afterAt, @afterId) in that order.
  listByActivity: `SELECT ${SESSION_COLUMNS} FROM sessions
       WHERE (@all = 1 OR archived = 0) AND (@parent IS NULL OR parent_id = @parent)
         AND (@workspace IS NULL OR json_extract(metadata, '$.workspace') = @workspace)
         AND (@query IS NULL OR instr(lower(id), @query) > 0 OR instr(lower(coalesce(title, '')), @query) > 0)
         AND (@afterAt IS NULL OR updated_at < @afterAt OR (updated_at = @afterAt AND id < @afterId))
       ORDER BY updated_at DESC, id DESC LIMIT @limit`,
  // A parent's children through the (parent_id, id) index: the general statement's `@parent IS NULL OR …`
  // cannot use it, so a childless session scanned every session (S1: each agent open and wait asks).
  listChildren: `SELECT ${SESSION_COLUMNS} FROM sessions
       WHERE parent_id = @parent AND (@before IS NULL OR id < @before) AND (@all = 1 OR archived = 0)
         AND (@workspace IS NULL OR json_extract(metadata, '$.workspace') = @workspace)
       ORDER BY id DESC LIMIT @limit`,
  // A prefix is an id range (session-ids.ts); one more row than is named tells "and more".
  sessionIdsInRange: "SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
  latestSession: `SELECT ${SESSION_COLUMNS} FROM sessions
       WHERE json_extract(metadata, '$.workspace') = @workspace AND (@all = 1 OR archived = 0)
         AND kind IN ('main', 'fork')
       ORDER BY updated_at DESC, id DESC LIMIT 1`,
  previousSessionId: "SELECT max(id) FROM sessions WHERE id < ?",
  nextSessionId: "SELECT min(id) FROM sessions WHERE id > ?",
  updateSession: `UPDATE sessions SET
         title = CASE WHEN @setTitle = 1 THEN @title ELSE title END,
         status = coalesce(@status, status),
         archived = coalesce(@archived, archived),
         metadata = coalesce(@metadata, metadata),
         updated_at = @now
       WHERE id = @id RETURNING ${SESSION_COLUMNS}`,
  lastSeq: "SELECT last_seq FROM sessions WHERE id = ?",
  leaseHeld: "SELECT 1 FROM leases WHERE name = ? AND owner = ? AND expires_at > ?",
  claimInbox: `UPDATE inbox SET claimed_at = ?, claimed_seq = ?
         WHERE session_id = ? AND id IN (SELECT value FROM json_each(?)) AND ${PENDING_INPUT} RETURNING id`,
  insertEvent:
    "INSERT INTO events (session_id, seq, type, at, turn, step, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
  advanceSession: `UPDATE sessions SET last_seq = @seq, updated_at = @now, turn_open = coalesce(@open, turn_open),
       status = coalesce(CASE @open WHEN 1 THEN 'running' WHEN 0 THEN 'idle' END, status),
       title = coalesce(@title, title) WHERE id = @id`,
  read: `SELECT session_id, seq, type, at, turn, step, data FROM events
       WHERE session_id = @id AND seq > @after AND seq <= @upTo ORDER BY seq LIMIT @limit`,
  readTypes: `SELECT session_id, seq, type, at, turn, step, data FROM events
       WHERE session_id = @id AND seq > @after AND seq <= @upTo
         AND type IN (SELECT value FROM json_each(@types)) ORDER BY seq LIMIT @limit`,
  insertInbox: `INSERT INTO inbox (id, session_id, queue, mode, source, text, metadata, created_at)
       SELECT @id, id, @queue, @mode, @source, @text, @metadata, @now FROM sessions
       WHERE id = @sessionId AND NOT (@refuseArchived AND archived)
       RETURNING ${INBOX_COLUMNS}`,
  pendingInbox: `SELECT ${INBOX_COLUMNS} FROM inbox WHERE session_id = ? AND ${PENDING_INPUT} ORDER BY position`,
  discardInbox: `UPDATE inbox SET discarded_at = ?
       WHERE session_id = ? AND id IN (SELECT value FROM json_each(?)) AND ${PENDING_INPUT}`,
  // Consumes the session's pending cancel requests, however many arrived. The read first
  // keeps the common case (none) out of the write lock: a runner looks on every other process's commit.
  hasCancelRequest: `SELECT 1 FROM inbox WHERE session_id = ? AND mode = 'cancel' AND ${PENDING} LIMIT 1`,
  takeCancelRequests: `UPDATE inbox SET claimed_at = ?
       WHERE session_id = ? AND mode = 'cancel' AND ${PENDING}`,
  // From the ready queue in `position` order (its index), skipping sessions held live.
  claimCandidates: `SELECT r.session_id FROM ready_sessions r
         WHERE NOT EXISTS (
           SELECT 1 FROM leases h WHERE h.name = 'session:' || r.session_id AND h.owner IS NOT NULL AND h.expires_at > ?)
         ORDER BY r.position LIMIT ?`,
  // Sessions whose last turn is open (partial index) and whose lease is not live.
  orphanCandidates: `SELECT s.id FROM sessions s
         WHERE s.turn_open = 1 AND NOT EXISTS (
           SELECT 1 FROM leases h WHERE h.name = 'session:' || s.id AND h.owner IS NOT NULL AND h.expires_at > ?)
         ORDER BY s.id LIMIT ?`,
  nextOrphanLapse: `SELECT expires_at FROM leases
         WHERE expires_at > ? AND owner IS NOT NULL AND substr(name, 1, 8) = 'session:'
         ORDER BY expires_at LIMIT 1`,
  // Fence: +1 whenever the holder changes (a new owner, or after a release). Same owner: extend only.
  acquireLease: `INSERT INTO leases (name, owner, expires_at, fence) VALUES (@name, @owner, @expires, 1)
       ON CONFLICT (name) DO UPDATE SET
         fence = CASE WHEN leases.owner IS excluded.owner THEN leases.fence ELSE leases.fence + 1 END,
         owner = excluded.owner,
         expires_at = excluded.expires_at
       WHERE leases.owner IS NULL OR leases.owner = excluded.owner OR leases.expires_at <= @now
       RETURNING ${LEASE_COLUMNS}`,
  renewLease: `UPDATE leases SET expires_at = ? WHERE name = ? AND owner = ? RETURNING ${LEASE_COLUMNS}`,
  releaseLease: "UPDATE leases SET owner = NULL, expires_at = ? WHERE name = ? AND owner = ?",
  getLease: `SELECT ${LEASE_COLUMNS} FROM leases WHERE name = ? AND owner IS NOT NULL AND expires_at > ?`,
  insertBlob: `INSERT INTO blobs (id, session_id, bytes, content, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?)
       RETURNING id, session_id, bytes, metadata, created_at`,
  getBlob: "SELECT id, session_id, bytes, metadata, created_at, content FROM blobs WHERE id = ?",
  sessionBlobBytes: "SELECT COALESCE(SUM(bytes), 0) AS total FROM blobs WHERE session_id = ?",
} as const;

/** Statements that return the first column of each row instead of an object. */
const PLUCKED: ReadonlySet<keyof typeof SQLITE_SQL> = new Set([
  "lastSeq",
  "leaseHeld",
  "hasCancelRequest",
  "claimInbox",
  "claimCandidates",
  "orphanCandidates",
  "nextOrphanLapse",
  "sessionIdsInRange",
  "previousSessionId",
  "nextSessionId",
]);

export type SqliteStatements = { readonly [K in keyof typeof SQLITE_SQL]: Database.Statement };

export function sqliteStatements(db: Database.Database): SqliteStatements {
  const prepared: Partial<Record<keyof typeof SQLITE_SQL, Database.Statement>> = {};
  for (const key of Object.keys(SQLITE_SQL) as (keyof typeof SQLITE_SQL)[]) {
    const statement = db.prepare(SQLITE_SQL[key]);
    prepared[key] = PLUCKED.has(key) ? statement.pluck() : statement;
  }
  return prepared as SqliteStatements;
}
