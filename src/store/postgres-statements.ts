/**
 * The PostgreSQL store's SQL. Hot statements are named, so each pooled connection parses and plans them
 * once (server-side prepared statements).
 *
 * The append (one round trip, ARCHITECTURE "Storage"): one statement whose first CTE advances the session's
 * `last_seq` only if it still equals the expected seq (and, when fenced, only while the owner holds the live
 * lease, by the database clock); the second inserts the events from parallel arrays only for the row the
 * first one updated; the final SELECT queues `pg_notify`, which PostgreSQL delivers at commit. A concurrent
 * append waits on the session row lock, re-checks `last_seq` against the committed row and matches nothing:
 * zero rows back means nothing was written, and a follow-up read names the reason.
 */

export const EVENTS_CHANNEL = "bdsh_events";
export const INBOX_CHANNEL = "bdsh_inbox";
/**
 * An inbox notification's payload is the session id, or, for a row `enqueueInbox`, `enqueueAndClaim` or
 * `requestCancel` added, a JSON object `{session, item, cancel, claimed?}` (the row's id; whether it is a
 * cancel request; whether its session was claimed with it).
 */
export function parseInboxPayload(payload: string): {
  sessionId: string;
  itemId?: string;
  cancel?: true;
  claimed?: true;
} {
  if (payload.startsWith("{")) {
    try {
      const parsed = JSON.parse(payload) as {
        session?: unknown;
        item?: unknown;
        cancel?: unknown;
        claimed?: unknown;
      };
      if (typeof parsed.session === "string" && typeof parsed.item === "string")
        return {
          sessionId: parsed.session,
          itemId: parsed.item,
          ...(parsed.cancel === true ? { cancel: true as const } : {}),
          ...(parsed.claimed === true ? { claimed: true as const } : {}),
        };
    } catch {
      // a session id that merely starts with "{"
    }
  }
  return { sessionId: payload };
}

/** The database keeps `seq` in an `integer` column. */
export const MAX_SEQ = 2_147_483_647;

const SESSION_COLUMNS =
  "id, parent_id, kind, title, status, archived, created_at, updated_at, last_seq, metadata";
const INBOX_COLUMNS = "id, session_id, queue, mode, source, text, metadata, created_at";
const LEASE_COLUMNS =
  "name, owner, round(extract(epoch FROM expires_at) * 1000)::float8 AS expires_at, fence::float8 AS fence";
const PENDING = "claimed_at IS NULL AND discarded_at IS NULL";
/** Pending input; a cancel request (mode `cancel`, rows.ts) is not input. */
const PENDING_INPUT = `${PENDING} AND mode <> 'cancel'`;
/** The lease `name` is held live by `owner` (expressions), by the database clock. */
const liveLease = (name: string, owner: string) =>
  `SELECT 1 FROM leases WHERE name = ${name} AND owner = ${owner} AND expires_at > now()`;

/** A live holder of the session lease of the session id expression `id`. */
const LIVE_HOLDER = (id: string) =>
  `SELECT 1 FROM leases h WHERE h.name = 'session:' || ${id} AND h.owner IS NOT NULL AND h.expires_at > now()`;

/**
 * A claim of session leases: `candidates` (columns `name`, `first`: the lease name and the order) are taken
 * with the next fence unless someone else holds them live. Returns `ids`, `seen` and any `extra` columns.
 * The claimed sessions' pending cancel requests are consumed in the same statement: a session claimed with
 * no one driving it has no turn for them to cancel (they came too late), and taking them here saves the
 * new driver a round trip of its own.
 */
function claimStatement(candidates: string, extra?: string): string {
  return `
      WITH candidates AS (${candidates}
      ), claimed AS (
        INSERT INTO leases AS l (name, owner, expires_at, fence)
        SELECT name, $1, now() + $2::float8 * interval '1 millisecond', 1 FROM candidates ORDER BY first
        ON CONFLICT (name) DO UPDATE SET
          owner = EXCLUDED.owner,
          expires_at = EXCLUDED.expires_at,
          fence = l.fence + CASE WHEN l.owner IS NOT DISTINCT FROM EXCLUDED.owner THEN 0 ELSE 1 END
        WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner OR l.expires_at <= now()
        RETURNING substr(l.name, ${"session:".length + 1}) AS session_id
      ), cancels AS (
        -- By session id (the pending index), never a walk over the inbox.
        UPDATE inbox SET claimed_at = now()
        WHERE session_id = ANY (ARRAY(SELECT session_id FROM claimed)) AND mode = 'cancel' AND ${PENDING}
      )
      SELECT coalesce((SELECT array_agg(session_id) FROM claimed), '{}') AS ids,
        (SELECT count(*) FROM candidates)::int AS seen${
          extra
            ? `,
        ${extra}`
            : ""
        }`;
}

/** The append's first two steps (see the header), shared by every `appendStatement`. */
/**
 * What an append sets on its session row (the single and the batched append; `row`: the row's qualifier):
 * the last seq, the turn flag and status when the events open or close a turn (`turnOpen` null: unchanged),
 * the title when they name one.
 */
const advanceSession = (row: string, to: { lastSeq: string; turnOpen: string; title: string }) => `
          last_seq = ${to.lastSeq}, updated_at = now(),
          turn_open = coalesce(${to.turnOpen}, ${row}turn_open),
          status = coalesce(CASE ${to.turnOpen} WHEN true THEN 'running' WHEN false THEN 'idle' END, ${row}status),
          title = coalesce(${to.title}, ${row}title)`;

const APPEND_CTES = `
      WITH upd AS (
        UPDATE sessions SET ${advanceSession("", {
          lastSeq: "$2::int + cardinality($5::text[])",
          turnOpen: "$10::boolean",
          title: "$11::text",
        })}
        WHERE id = $1 AND last_seq = $2::int AND ($4::text IS NULL OR EXISTS (${liveLease("$3", "$4")}))
        RETURNING id, last_seq
      ), ins AS (
        INSERT INTO events (session_id, seq, type, at, turn, step, data)
        SELECT upd.id, $2::int + e.ord, e.type, e.at, e.turn, e.step, e.data
        FROM upd, unnest($5::text[], $6::text[], $7::int[], $8::int[], $9::text[])
          WITH ORDINALITY AS e(type, at, turn, step, data, ord)
      )`;

/**
 * The append, with or without an inbox claim ($12: the row ids; the claim runs only if the append matched,
 * and if any row is no longer pending `bdsh_refuse_claim` raises, SQLSTATE BD001, and nothing of the
 * statement is kept). $1 session, $2 expected seq, $3 lease name, $4 lease owner or null, $5…$9 parallel
 * event arrays, $10 whether the last turn is open after them (null: unchanged), $11 the title of the last
 * `session/title` among them (null: none; the row's title follows the log's). Without `flushWal` the statement turns `synchronous_commit` off for its own transaction: the
 * commit returns before its WAL reaches disk (`AppendDurability` "commit"). `releasing`: the lease $3 held
 * by $4 is let go in the same statement, only if the append matched (a drive's last flush, AppendOptions
 * `releaseLease`).
 */
export type NamedStatement = { name: string; text: string };

export type AppendKind = { claiming: boolean; flushWal: boolean; releasing: boolean };

export function appendStatement(kind: AppendKind): NamedStatement {
  const key = (kind.claiming ? 1 : 0) | (kind.flushWal ? 2 : 0) | (kind.releasing ? 4 : 0);
  let statement = APPEND_STATEMENTS[key];
  if (!statement) {
    statement = buildAppend(kind);
    APPEND_STATEMENTS[key] = statement;
  }
  return statement;
}

/** The eight variants, built on first use (each a named statement, parsed once per connection). */
const APPEND_STATEMENTS: (NamedStatement | undefined)[] = [];

function buildAppend({ claiming, flushWal, releasing }: AppendKind): NamedStatement {
  const notify = `pg_notify('${EVENTS_CHANNEL}', upd.id || ':' || upd.last_seq)`;
  const lazy = flushWal ? "" : ", set_config('synchronous_commit', 'off', true)";
  const name = `bdsh_append${claiming ? "_claiming" : ""}${flushWal ? "" : "_commit"}${releasing ? "_releasing" : ""}`;
  // A data-modifying WITH runs whether or not the final SELECT reads it.
  const released = releasing
    ? `, released AS (
        UPDATE leases SET owner = NULL, expires_at = now()
        WHERE name = $3 AND owner = $4 AND EXISTS (SELECT 1 FROM upd)
      )`
    : "";
  if (!claiming) return { name, text: `${APPEND_CTES}${released}\n      SELECT ${notify}${lazy} FROM upd` };
  return {
    name,
    text: `
      ${APPEND_CTES}${released}, claimed AS (
        UPDATE inbox SET claimed_at = now(), claimed_seq = $2::int + 1
        WHERE session_id = $1 AND id = ANY($12::text[]) AND ${PENDING_INPUT} AND EXISTS (SELECT 1 FROM upd)
        RETURNING id
      )
      SELECT ${notify}${lazy},
        CASE WHEN (SELECT count(*) FROM claimed) <> cardinality($12::text[])
          THEN bdsh_refuse_claim(cardinality($12::text[]) - (SELECT count(*) FROM claimed)) END
      FROM upd`,
  };
}

/**
 * Appends of several sessions in one statement (group commit, statement-combiner.ts), each as the single append
 * above would run it. $1…$8 one entry per append: session, expected seq, event count, lease name, lease
 * owner or null, the turn flag after it (null: unchanged), the title (null: none), whether to let go of the
 * lease; $9…$15 one entry per event: which append (1-based, as $1's ordinality), seq, type, at, turn, step,
 * data; $16, $17 one entry per inbox claim: which append, the row id.
 *
 * An append whose seq or lease check fails, or one of whose claimed rows is no longer pending, writes
 * nothing and is missing from the answer (its `k`); the others are stored. A claimed row that a concurrent
 * discard took between that check and the claim's own update raises `bdsh_refuse_claim` and undoes the
 * whole batch (the caller then runs each append alone). The batch's sessions never repeat (the combiner
 * sends one write per session).
 */
export function appendBatchStatement(flushWal: boolean): NamedStatement {
  const key = flushWal ? 1 : 0;
  let statement = APPEND_BATCH_STATEMENTS[key];
  if (!statement) {
    const lazy = flushWal ? "" : ", set_config('synchronous_commit', 'off', true)";
    statement = {
      name: `bdsh_append_batch${flushWal ? "" : "_commit"}`,
      text: `
      WITH input AS (
        SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::text[], $6::boolean[],
          $7::text[], $8::boolean[]) WITH ORDINALITY AS i(id, expected, n, lease, owner, turn_open, title, release, k)
      ), claims AS (
        SELECT * FROM unnest($16::int[], $17::text[]) AS c(k, row_id)
      ), upd AS (
        UPDATE sessions s SET ${advanceSession("s.", { lastSeq: "i.expected + i.n", turnOpen: "i.turn_open", title: "i.title" })}
        FROM input i
        WHERE s.id = i.id AND s.last_seq = i.expected AND (i.owner IS NULL OR EXISTS (${liveLease("i.lease", "i.owner")}))
          AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.k = i.k AND NOT EXISTS (
            SELECT 1 FROM inbox b WHERE b.session_id = i.id AND b.id = c.row_id AND ${PENDING_INPUT}))
        RETURNING s.id, s.last_seq, i.expected, i.k, i.lease, i.owner, i.release
      ), ins AS (
        INSERT INTO events (session_id, seq, type, at, turn, step, data)
        SELECT upd.id, e.seq, e.type, e.at, e.turn, e.step, e.data
        FROM unnest($9::int[], $10::int[], $11::text[], $12::text[], $13::int[], $14::int[], $15::text[])
          AS e(k, seq, type, at, turn, step, data)
        JOIN upd ON upd.k = e.k
      ), released AS (
        UPDATE leases l SET owner = NULL, expires_at = now()
        FROM upd WHERE upd.release AND l.name = upd.lease AND l.owner = upd.owner
      ), claimed AS (
        UPDATE inbox b SET claimed_at = now(), claimed_seq = upd.expected + 1
        FROM claims c JOIN upd ON upd.k = c.k
        WHERE b.session_id = upd.id AND b.id = c.row_id AND ${PENDING_INPUT}
        RETURNING b.id
      )
      SELECT upd.k::int AS k, pg_notify('${EVENTS_CHANNEL}', upd.id || ':' || upd.last_seq)${lazy},
        CASE WHEN (SELECT count(*) FROM claimed) <> (SELECT count(*) FROM claims c JOIN upd ON upd.k = c.k)
          THEN bdsh_refuse_claim((SELECT count(*) FROM claims c JOIN upd ON upd.k = c.k)
            - (SELECT count(*) FROM claimed)) END
      FROM upd`,
    };
    APPEND_BATCH_STATEMENTS[key] = statement;
  }
  return statement;
}

const APPEND_BATCH_STATEMENTS: (NamedStatement | undefined)[] = [];

export const SQL = {
  /** Which of the given inbox rows are still pending (to name the ones a refused claim missed). */
  stillPending: {
    name: "bdsh_still_pending",
    text: `SELECT id FROM inbox WHERE session_id = $1 AND id = ANY($2::text[]) AND ${PENDING_INPUT}`,
  },
  /** Why an append matched nothing. */
  diagnose: {
    name: "bdsh_append_diagnose",
    text: `SELECT last_seq,
             ($3::text IS NULL OR EXISTS (SELECT 1 FROM leases WHERE name = $2 AND owner = $3 AND expires_at > now()))
             AS held
           FROM sessions WHERE id = $1`,
  },
  read: {
    name: "bdsh_read",
    text: `
      SELECT session_id, seq, type, at, turn, step, data FROM events
      WHERE session_id = $1 AND seq > $2 AND seq <= $3 AND ($4::text[] IS NULL OR type = ANY($4::text[]))
      ORDER BY seq LIMIT $5`,
  },
  /**
   * `readForDrive`, one statement: the event rows after $2 in order, then one final row whose `pending`
   * (the pending input, as `pendingInbox`) and `session` (the row, as `getSession`; null if none) are
   * JSON. Times travel as whole epoch milliseconds: what `pg` makes of a timestamptz, a Date, keeps no more.
   */
  readForDrive: {
    name: "bdsh_read_for_drive",
    text: `
      SELECT session_id, seq, type, at, turn, step, data, NULL::json AS pending, NULL::json AS session,
        0 AS part
      FROM events WHERE session_id = $1 AND seq > $2
      UNION ALL
      SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        (SELECT json_agg(json_build_object('id', i.id, 'session_id', i.session_id, 'queue', i.queue,
            'mode', i.mode, 'source', i.source, 'text', i.text, 'metadata', i.metadata,
            'created_ms', floor(extract(epoch FROM i.created_at) * 1000)) ORDER BY i.position)
          FROM inbox i WHERE i.session_id = $1 AND ${PENDING_INPUT}),
        (SELECT json_build_object('id', s.id, 'parent_id', s.parent_id, 'kind', s.kind, 'title', s.title,
            'status', s.status, 'archived', s.archived, 'last_seq', s.last_seq, 'metadata', s.metadata,
            'created_ms', floor(extract(epoch FROM s.created_at) * 1000),
            'updated_ms', floor(extract(epoch FROM s.updated_at) * 1000))
          FROM sessions s WHERE s.id = $1),
        1
      ORDER BY part, seq`,
  },
  insertSession: `
    INSERT INTO sessions (id, parent_id, kind, title, status, metadata) VALUES ($1, $2, $3, $4, $5, $6)
    RETURNING ${SESSION_COLUMNS}`,
  getSession: { name: "bdsh_get_session", text: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1` },
  listSessions: `
    SELECT ${SESSION_COLUMNS} FROM sessions
    WHERE ($1::text IS NULL OR id < $1) AND ($2::boolean OR NOT archived) AND ($3::text IS NULL OR parent_id = $3)
      AND ($5::text IS NULL OR metadata::json ->> 'workspace' = $5)
      AND ($6::text IS NULL OR strpos(lower(id), $6) > 0 OR strpos(lower(coalesce(title, '')), $6) > 0)
    ORDER BY id DESC LIMIT $4`,
  // The same filters, most recently active first. Times compare at millisecond precision, the precision
  // the cursor carries (an ISO string): a microsecond left out would repeat or skip a row at a page edge.
  listByActivity: `
    SELECT ${SESSION_COLUMNS} FROM sessions
    WHERE ($1::boolean OR NOT archived) AND ($2::text IS NULL OR parent_id = $2)
      AND ($4::text IS NULL OR metadata::json ->> 'workspace' = $4)
      AND ($5::text IS NULL OR strpos(lower(id), $5) > 0 OR strpos(lower(coalesce(title, '')), $5) > 0)
      AND ($6::timestamptz IS NULL OR date_trunc('milliseconds', updated_at) < $6::timestamptz
        OR (date_trunc('milliseconds', updated_at) = $6::timestamptz AND id COLLATE "C" < $7::text))
    ORDER BY date_trunc('milliseconds', updated_at) DESC, id COLLATE "C" DESC LIMIT $3`,
  // A prefix is an id range (session-ids.ts); one more row than is named tells "and more".
  sessionIdsInRange: "SELECT id FROM sessions WHERE id >= $1 AND id < $2 ORDER BY id LIMIT $3",
  latestSession: `
    SELECT ${SESSION_COLUMNS} FROM sessions
    WHERE metadata::json ->> 'workspace' = $1 AND ($2::boolean OR NOT archived) AND kind IN ('main', 'fork')
    ORDER BY updated_at DESC, id DESC LIMIT 1`,
  sessionIdNeighbours: `
    SELECT given.id,
      (SELECT max(s.id) FROM sessions s WHERE s.id < given.id COLLATE "C") AS previous,
      (SELECT min(s.id) FROM sessions s WHERE s.id > given.id COLLATE "C") AS next
    FROM unnest($1::text[]) AS given(id)`,
  updateSession: {
    name: "bdsh_update_session",
    text: `
    UPDATE sessions SET
      title = CASE WHEN $2::boolean THEN $3 ELSE title END,
      status = coalesce($4, status),
      archived = coalesce($5, archived),
      metadata = coalesce($6, metadata),
      updated_at = now()
    WHERE id = $1 RETURNING ${SESSION_COLUMNS}`,
  },
  enqueueInbox: {
    name: "bdsh_enqueue_inbox",
    text: `
    WITH ins AS (
      INSERT INTO inbox (id, session_id, queue, mode, source, text, metadata)
      SELECT $1, id, $3, $4, $5, $6, $7 FROM sessions WHERE id = $2 AND NOT ($8::boolean AND archived)
      RETURNING ${INBOX_COLUMNS}
    )
    SELECT ins.*, pg_notify('${INBOX_CHANNEL}',
      json_build_object('session', ins.session_id, 'item', ins.id, 'cancel', ins.mode = 'cancel')::text)
    FROM ins`,
  },
  /** `enqueueAndClaim`: migration 8's function (why a function, there). */
  enqueueAndClaim: {
    name: "bdsh_enqueue_and_claim",
    text: "SELECT * FROM bdsh_enqueue_claim($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
  },
  /**
   * Several sessions' `enqueueAndClaim` in one statement (group commit): the same function once per
   * message, its parameters as parallel arrays, each call's rows tagged with the message's 1-based index
   * `k` and kept in order (`n`). The function is volatile, so each of its statements still reads what
   * committed before it. A message whose session is missing (or archived and refused) has no rows.
   */
  enqueueAndClaimBatch: {
    name: "bdsh_enqueue_and_claim_batch",
    text: `
    SELECT m.k::int AS k, f.*
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
      $8::boolean[], $9::text[], $10::float8[], $11::int[], $12::int[])
      AS m(id, session, queue, mode, source, text, metadata, refuse_archived, owner, ttl_ms, after, k)
    CROSS JOIN LATERAL bdsh_enqueue_claim(m.id, m.session, m.queue, m.mode, m.source, m.text, m.metadata,
      m.refuse_archived, m.owner, m.ttl_ms, m.after) WITH ORDINALITY
      AS f(session_id, seq, type, at, turn, step, data, pending, session, item, claimed, n)
    ORDER BY m.k, f.n`,
  },
  pendingInbox: {
    name: "bdsh_pending_inbox",
    text: `SELECT ${INBOX_COLUMNS} FROM inbox WHERE session_id = $1 AND ${PENDING_INPUT} ORDER BY position`,
  },
  discardInbox: `
    WITH d AS (
      UPDATE inbox SET discarded_at = now()
      WHERE session_id = $1 AND id = ANY($2::text[]) AND ${PENDING_INPUT} RETURNING id
    )
    SELECT d.id, pg_notify('${INBOX_CHANNEL}', $1) FROM d`,
  /** Consumes the session's pending cancel requests (not announced: nothing to claim). */
  takeCancelRequests: {
    name: "bdsh_take_cancel_requests",
    text: `UPDATE inbox SET claimed_at = now() WHERE session_id = $1 AND mode = 'cancel' AND ${PENDING}`,
  },
  /**
   * $1 owner, $2 ttl ms, $3 limit. The candidates come from the ready queue
   * (`ready_sessions`, one row per session with pending turn input, walked in `position` order by its
   * index), so a pass reads about `limit` rows however many sessions wait, plus those at the head whose
   * lease is live (sessions driving now with more input queued). The ON CONFLICT re-check makes a concurrent
   * claimer skip, not steal; `seen` > claimed ids means another claimer took some of the same candidates at
   * the same moment (the store then claims again: those sessions are now leased and drop out).
   */
  claimPendingSessions: {
    name: "bdsh_claim_pending_sessions",
    text: claimStatement(`
        SELECT 'session:' || r.session_id AS name, r.position AS first FROM ready_sessions r
        WHERE NOT EXISTS (${LIVE_HOLDER("r.session_id")})
        ORDER BY r.position LIMIT $3`),
  },
  /**
   * R1: the same claim over sessions whose last turn is open and whose lease is not live
   * (the partial index `sessions_turn_open` holds only open turns: the sessions driving now, and orphans).
   * `next_lapse_ms`: how long until the soonest live session lease lapses (null: none; `leases_expiry`
   * walks from now), so the runner can look again the moment a driver that died stops renewing. Any live
   * session lease counts, not only those of open turns: a claimed session's turn may open just after this.
   */
  claimOrphanedSessions: {
    name: "bdsh_claim_orphaned_sessions",
    text: claimStatement(
      `
        SELECT 'session:' || s.id AS name, s.id AS first FROM sessions s
        WHERE s.turn_open AND NOT EXISTS (${LIVE_HOLDER("s.id")})
        ORDER BY s.id LIMIT $3`,
      `(SELECT (extract(epoch FROM h.expires_at - now()) * 1000)::float8 FROM leases h
          WHERE h.expires_at > now() AND h.owner IS NOT NULL AND substr(h.name, 1, 8) = 'session:'
          ORDER BY h.expires_at LIMIT 1) AS next_lapse_ms`,
    ),
  },
  /** Fence: +1 whenever the holder changes (a new owner, or after a release). Same owner: extend only. */
  acquireLease: {
    name: "bdsh_acquire_lease",
    text: `
    INSERT INTO leases AS l (name, owner, expires_at, fence)
    VALUES ($1, $2, now() + $3::float8 * interval '1 millisecond', 1)
    ON CONFLICT (name) DO UPDATE SET
      owner = EXCLUDED.owner,
      expires_at = EXCLUDED.expires_at,
      fence = l.fence + CASE WHEN l.owner IS NOT DISTINCT FROM EXCLUDED.owner THEN 0 ELSE 1 END
    WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner OR l.expires_at <= now()
    RETURNING ${LEASE_COLUMNS}`,
  },
  renewLease: {
    name: "bdsh_renew_lease",
    text: `
    UPDATE leases SET expires_at = now() + $3::float8 * interval '1 millisecond'
    WHERE name = $1 AND owner = $2 RETURNING ${LEASE_COLUMNS}`,
  },
  releaseLease: {
    name: "bdsh_release_lease",
    text: "UPDATE leases SET owner = NULL, expires_at = now() WHERE name = $1 AND owner = $2",
  },
  getLease: {
    name: "bdsh_get_lease",
    text: `SELECT ${LEASE_COLUMNS} FROM leases WHERE name = $1 AND owner IS NOT NULL AND expires_at > now()`,
  },
  insertBlob: `
    INSERT INTO blobs (id, session_id, bytes, content, metadata) VALUES ($1, $2, $3, $4, $5)
    RETURNING id, session_id, bytes, metadata, created_at`,
  getBlob: "SELECT id, session_id, bytes, metadata, created_at, content FROM blobs WHERE id = $1",
  sessionBlobBytes: "SELECT COALESCE(SUM(bytes), 0)::bigint AS total FROM blobs WHERE session_id = $1",
  migrationsTable: `
    CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`,
} as const;
