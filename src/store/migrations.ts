/**
 * Versioned schema for both dialects. Each migration runs once, inside the runner's
 * transaction, and is recorded in `schema_migrations`; the runners serialise concurrent starts (PostgreSQL:
 * an advisory transaction lock taken before anything is created; SQLite: a `BEGIN IMMEDIATE` write lock).
 *
 * Invariants:
 * - Versions only grow; a migration is never edited once released — change the schema with a new one.
 * - Event `data` and `at` are text, so they round-trip byte for byte (no `jsonb`, no timestamp reparsing).
 * - Ids are UUIDv7 text: ordering by id is ordering by creation time, which keeps listings cheap.
 * - Jobs arrive as a later migration. Version 2: goals (P3, one per session) and schedules (S8), with
 *   schedule times as epoch milliseconds so a claim compares them exactly.
 * - SQLite 3, PostgreSQL 4: the claim reads two small indexed sets instead of grouping the inbox.
 *   `ready_sessions` is the ready queue: one row per session with pending turn input (a follow-up or a
 *   steer; injects never open a turn), `waiting` of them, the oldest at `position`. Triggers on `inbox`
 *   keep it, so every writer of inbox rows (enqueue, goal rounds, schedules, claims in an append, discards)
 *   keeps it without knowing. `sessions.turn_open` says the log's last turn has no `turn/end` (the append
 *   sets it from the events it writes); a session with an open turn and no live lease is orphaned (R1).
 *   Both are backfilled from the rows when the migration runs. `leases_expiry` finds the soonest live
 *   lease without reading released ones (the moment to look for orphans again).
 * - SQLite 6, PostgreSQL 7: `process_receipts`, a background job's checkpoint and receipt
 *   (store/process-receipts.ts).
 * - SQLite 4, PostgreSQL 5: a cross-server cancel (L7) is an inbox row of its own kind,
 *   `mode = 'cancel'`, no longer an inject marked by `metadata.control`. The ready-queue triggers now name
 *   the modes that open a turn (`followup`, `steer`) instead of excluding `inject`, so a cancel row never
 *   makes a session ready; pending marker rows are converted (a marker a step already spliced stays the
 *   inject it was delivered as). The store's input queries skip cancel rows (rows.ts `CANCEL_MODE`).
 */

export type Migration = { version: number; name: string; sql: string };

/** The advisory lock key the PostgreSQL runner holds while migrating ("bdsh" in ASCII). */
export const MIGRATION_LOCK_KEY = 0x62647368;

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "sessions, events, inbox, leases, blobs",
    sql: `
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        parent_id TEXT,
        kind TEXT NOT NULL,
        title TEXT,
        status TEXT NOT NULL,
        archived INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        last_seq INTEGER NOT NULL DEFAULT 0,
        metadata TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX sessions_parent ON sessions (parent_id, id);

      -- No foreign key: append updates the session row first, in the same transaction.
      CREATE TABLE events (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        at TEXT NOT NULL,
        turn INTEGER,
        step INTEGER,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) WITHOUT ROWID;

      CREATE TABLE inbox (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        queue TEXT NOT NULL,
        mode TEXT NOT NULL,
        source TEXT NOT NULL,
        text TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        claimed_at TEXT,
        claimed_seq INTEGER,
        discarded_at TEXT
      );
      CREATE INDEX inbox_pending ON inbox (session_id, position)
        WHERE claimed_at IS NULL AND discarded_at IS NULL;

      -- expires_at: epoch milliseconds. owner NULL: released (the row stays so the fence keeps growing).
      CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        owner TEXT,
        expires_at INTEGER NOT NULL,
        fence INTEGER NOT NULL
      );

      CREATE TABLE blobs (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        bytes INTEGER NOT NULL,
        content BLOB NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
      );
      CREATE INDEX blobs_session ON blobs (session_id);
    `,
  },
  {
    version: 2,
    name: "goals, schedules",
    sql: `
      CREATE TABLE goals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL UNIQUE REFERENCES sessions (id),
        revision INTEGER NOT NULL,
        objective TEXT NOT NULL,
        phase TEXT NOT NULL,
        rounds_started INTEGER NOT NULL DEFAULT 0,
        max_rounds INTEGER NOT NULL,
        blocked_reason TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );

      -- next_at, last_occurrence_at: epoch milliseconds; next_at NULL once a one-shot has fired.
      CREATE TABLE schedules (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        title TEXT NOT NULL,
        prompt TEXT NOT NULL,
        timing TEXT NOT NULL,
        next_at INTEGER,
        last_occurrence_at INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX schedules_session ON schedules (session_id, id);
      CREATE INDEX schedules_due ON schedules (next_at) WHERE next_at IS NOT NULL;
    `,
  },
  {
    version: 3,
    name: "ready queue, open turns",
    sql: `
      CREATE TABLE ready_sessions (
        session_id TEXT PRIMARY KEY,
        position INTEGER NOT NULL,
        waiting INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX ready_sessions_order ON ready_sessions (position);
      INSERT INTO ready_sessions (session_id, position, waiting)
        SELECT session_id, min(position), count(*) FROM inbox
        WHERE claimed_at IS NULL AND discarded_at IS NULL AND mode <> 'inject' GROUP BY session_id;

      CREATE TRIGGER inbox_ready_added AFTER INSERT ON inbox
        WHEN NEW.mode <> 'inject' AND NEW.claimed_at IS NULL AND NEW.discarded_at IS NULL
      BEGIN
        INSERT INTO ready_sessions (session_id, position, waiting) VALUES (NEW.session_id, NEW.position, 1)
          ON CONFLICT (session_id) DO UPDATE SET
            waiting = waiting + 1, position = min(position, excluded.position);
      END;

      CREATE TRIGGER inbox_ready_taken AFTER UPDATE OF claimed_at, discarded_at ON inbox
        WHEN NEW.mode <> 'inject' AND OLD.claimed_at IS NULL AND OLD.discarded_at IS NULL
          AND (NEW.claimed_at IS NOT NULL OR NEW.discarded_at IS NOT NULL)
      BEGIN
        UPDATE ready_sessions SET
          waiting = waiting - 1,
          position = coalesce((SELECT min(i.position) FROM inbox i WHERE i.session_id = NEW.session_id
            AND i.claimed_at IS NULL AND i.discarded_at IS NULL AND i.mode <> 'inject'), position)
          WHERE session_id = NEW.session_id;
        DELETE FROM ready_sessions WHERE session_id = NEW.session_id AND waiting <= 0;
      END;

      ALTER TABLE sessions ADD COLUMN turn_open INTEGER NOT NULL DEFAULT 0;
      UPDATE sessions SET turn_open = 1 WHERE (
        SELECT e.type FROM events e WHERE e.session_id = sessions.id AND e.type IN ('turn/start', 'turn/end')
        ORDER BY e.seq DESC LIMIT 1
      ) = 'turn/start';
      CREATE INDEX sessions_turn_open ON sessions (id) WHERE turn_open = 1;
      CREATE INDEX leases_expiry ON leases (expires_at);
    `,
  },
  {
    version: 4,
    name: "cancel requests",
    sql: `
      UPDATE inbox SET mode = 'cancel'
        WHERE mode = 'inject' AND claimed_at IS NULL AND discarded_at IS NULL
          AND CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.control') = 'cancel' ELSE 0 END;

      DROP TRIGGER inbox_ready_added;
      CREATE TRIGGER inbox_ready_added AFTER INSERT ON inbox
        WHEN NEW.mode IN ('followup', 'steer') AND NEW.claimed_at IS NULL AND NEW.discarded_at IS NULL
      BEGIN
        INSERT INTO ready_sessions (session_id, position, waiting) VALUES (NEW.session_id, NEW.position, 1)
          ON CONFLICT (session_id) DO UPDATE SET
            waiting = waiting + 1, position = min(position, excluded.position);
      END;

      DROP TRIGGER inbox_ready_taken;
      CREATE TRIGGER inbox_ready_taken AFTER UPDATE OF claimed_at, discarded_at ON inbox
        WHEN NEW.mode IN ('followup', 'steer') AND OLD.claimed_at IS NULL AND OLD.discarded_at IS NULL
          AND (NEW.claimed_at IS NOT NULL OR NEW.discarded_at IS NOT NULL)
      BEGIN
        UPDATE ready_sessions SET
          waiting = waiting - 1,
          position = coalesce((SELECT min(i.position) FROM inbox i WHERE i.session_id = NEW.session_id
            AND i.claimed_at IS NULL AND i.discarded_at IS NULL AND i.mode IN ('followup', 'steer')), position)
          WHERE session_id = NEW.session_id;
        DELETE FROM ready_sessions WHERE session_id = NEW.session_id AND waiting <= 0;
      END;
    `,
  },
  {
    version: 5,
    name: "harness keys",
    // Secrets the servers of one store share (the HMAC key of subagent handles); never shown to tools.
    sql: `
      CREATE TABLE harness_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TEXT NOT NULL);
    `,
  },
  {
    version: 6,
    name: "process receipts",
    // Tools-runtime: a background job's checkpoint while it runs, its redacted receipt after.
    sql: `
      CREATE TABLE process_receipts (
        session_id TEXT NOT NULL,
        job_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        label TEXT NOT NULL,
        command TEXT NOT NULL,
        backend TEXT NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER,
        start_ticks INTEGER,
        started_at INTEGER NOT NULL,
        state TEXT NOT NULL,
        exit_code INTEGER,
        signal TEXT,
        finished_at INTEGER,
        output_tail TEXT NOT NULL,
        output_bytes INTEGER NOT NULL,
        read_bytes INTEGER NOT NULL,
        output_blob_id TEXT,
        note TEXT,
        PRIMARY KEY (session_id, job_id)
      );
      CREATE INDEX process_receipts_running ON process_receipts (host) WHERE state = 'running';
      CREATE INDEX process_receipts_finished ON process_receipts (finished_at) WHERE state <> 'running';
    `,
  },
];

/**
 * `bdsh_enqueue_claim`, as migrations 8 and 9 create it: the same function, its inbox notification sent
 * either as the row goes in (8) or after the claim, saying whether the session was taken (9). One text for
 * both, so the two migrations cannot drift apart; each keeps exactly the SQL it ran.
 */
function enqueueClaimFunction(
  create: "CREATE FUNCTION" | "CREATE OR REPLACE FUNCTION",
  notifyAfterClaim: boolean,
): string {
  const notifyOnInsert = notifyAfterClaim ? "" : NOTIFY_ON_INSERT;
  const notifyOnClaim = notifyAfterClaim ? NOTIFY_ON_CLAIM : "";
  return `
      ${create} bdsh_enqueue_claim(
        p_id text, p_session text, p_queue text, p_mode text, p_source text, p_text text, p_metadata text,
        p_refuse_archived boolean, p_owner text, p_ttl_ms float8, p_after integer
      ) RETURNS TABLE (
        session_id text, seq integer, type text, at text, turn integer, step integer, data text,
        pending json, session json, item json, claimed boolean
      ) LANGUAGE plpgsql AS $$
      #variable_conflict use_column
      DECLARE
        v_item json;
        v_claimed boolean;
      BEGIN
        INSERT INTO inbox (id, session_id, queue, mode, source, text, metadata)
          SELECT p_id, s.id, p_queue, p_mode, p_source, p_text, p_metadata FROM sessions s
          WHERE s.id = p_session AND NOT (p_refuse_archived AND s.archived)
          RETURNING json_build_object('id', inbox.id, 'session_id', inbox.session_id, 'queue', inbox.queue,
            'mode', inbox.mode, 'source', inbox.source, 'text', inbox.text, 'metadata', inbox.metadata,
            'created_ms', floor(extract(epoch FROM inbox.created_at) * 1000)) INTO v_item;
        IF v_item IS NULL THEN
          RETURN;
        END IF;
${notifyOnInsert}        INSERT INTO leases AS l (name, owner, expires_at, fence)
          VALUES ('session:' || p_session, p_owner, now() + p_ttl_ms * interval '1 millisecond', 1)
          ON CONFLICT (name) DO UPDATE SET
            owner = EXCLUDED.owner,
            expires_at = EXCLUDED.expires_at,
            fence = l.fence + CASE WHEN l.owner IS NOT DISTINCT FROM EXCLUDED.owner THEN 0 ELSE 1 END
          WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner OR l.expires_at <= now()
          RETURNING true INTO v_claimed;
${notifyOnClaim}        IF v_claimed IS NULL THEN
          RETURN QUERY SELECT NULL::text, NULL::integer, NULL::text, NULL::text, NULL::integer, NULL::integer,
            NULL::text, NULL::json, NULL::json, v_item, false;
          RETURN;
        END IF;
        UPDATE inbox i SET claimed_at = now()
          WHERE i.session_id = p_session AND i.mode = 'cancel' AND i.claimed_at IS NULL AND i.discarded_at IS NULL;
        RETURN QUERY SELECT e.session_id, e.seq, e.type, e.at, e.turn, e.step, e.data, NULL::json, NULL::json,
            NULL::json, NULL::boolean
          FROM events e WHERE p_after IS NOT NULL AND e.session_id = p_session AND e.seq > p_after
          ORDER BY e.seq;
        RETURN QUERY SELECT NULL::text, NULL::integer, NULL::text, NULL::text, NULL::integer, NULL::integer,
          NULL::text,
          (SELECT json_agg(json_build_object('id', i.id, 'session_id', i.session_id, 'queue', i.queue,
              'mode', i.mode, 'source', i.source, 'text', i.text, 'metadata', i.metadata,
              'created_ms', floor(extract(epoch FROM i.created_at) * 1000)) ORDER BY i.position)
            FROM inbox i WHERE i.session_id = p_session AND i.claimed_at IS NULL AND i.discarded_at IS NULL
              AND i.mode <> 'cancel'),
          (SELECT json_build_object('id', s.id, 'parent_id', s.parent_id, 'kind', s.kind, 'title', s.title,
              'status', s.status, 'archived', s.archived, 'last_seq', s.last_seq, 'metadata', s.metadata,
              'created_ms', floor(extract(epoch FROM s.created_at) * 1000),
              'updated_ms', floor(extract(epoch FROM s.updated_at) * 1000))
            FROM sessions s WHERE s.id = p_session),
          v_item, true;
      END $$;
`;
}

const NOTIFY_ON_INSERT = `        PERFORM pg_notify('bdsh_inbox',
          json_build_object('session', p_session, 'item', p_id, 'cancel', p_mode = 'cancel')::text);
`;
const NOTIFY_ON_CLAIM = `        PERFORM pg_notify('bdsh_inbox', json_build_object('session', p_session, 'item', p_id,
          'cancel', p_mode = 'cancel', 'claimed', v_claimed IS NOT NULL)::text);
`;

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "sessions, events, inbox, leases, blobs",
    sql: `
      CREATE TABLE sessions (
        id text COLLATE "C" PRIMARY KEY,
        parent_id text COLLATE "C",
        kind text NOT NULL,
        title text,
        status text NOT NULL,
        archived boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        last_seq integer NOT NULL DEFAULT 0,
        metadata text NOT NULL DEFAULT '{}'
      );
      CREATE INDEX sessions_parent ON sessions (parent_id, id);

      -- No foreign key: append updates the session row first, in the same statement.
      CREATE TABLE events (
        session_id text COLLATE "C" NOT NULL,
        seq integer NOT NULL,
        type text NOT NULL,
        at text NOT NULL,
        turn integer,
        step integer,
        data text NOT NULL,
        PRIMARY KEY (session_id, seq)
      );

      CREATE TABLE inbox (
        position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text COLLATE "C" NOT NULL UNIQUE,
        session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
        queue text NOT NULL,
        mode text NOT NULL,
        source text NOT NULL,
        text text NOT NULL,
        metadata text NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        claimed_at timestamptz,
        claimed_seq integer,
        discarded_at timestamptz
      );
      CREATE INDEX inbox_pending ON inbox (session_id, position)
        WHERE claimed_at IS NULL AND discarded_at IS NULL;

      -- owner NULL: released (the row stays so the fence keeps growing).
      CREATE TABLE leases (
        name text COLLATE "C" PRIMARY KEY,
        owner text,
        expires_at timestamptz NOT NULL,
        fence bigint NOT NULL
      );

      CREATE TABLE blobs (
        id text COLLATE "C" PRIMARY KEY,
        session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
        bytes integer NOT NULL,
        content bytea NOT NULL,
        metadata text NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX blobs_session ON blobs (session_id);
    `,
  },
  {
    version: 2,
    name: "goals, schedules",
    sql: `
      CREATE TABLE goals (
        id text COLLATE "C" PRIMARY KEY,
        session_id text COLLATE "C" NOT NULL UNIQUE REFERENCES sessions (id),
        revision bigint NOT NULL,
        objective text NOT NULL,
        phase text NOT NULL,
        rounds_started integer NOT NULL DEFAULT 0,
        max_rounds integer NOT NULL,
        blocked_reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      -- next_at, last_occurrence_at: epoch milliseconds; next_at NULL once a one-shot has fired.
      CREATE TABLE schedules (
        id text COLLATE "C" PRIMARY KEY,
        session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
        title text NOT NULL,
        prompt text NOT NULL,
        timing text NOT NULL,
        next_at bigint,
        last_occurrence_at bigint,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX schedules_session ON schedules (session_id, id);
      CREATE INDEX schedules_due ON schedules (next_at) WHERE next_at IS NOT NULL;
    `,
  },
  {
    version: 3,
    name: "one-statement append with inbox claims",
    // The append that also claims inbox rows is one statement (postgres-statements.ts): when a row is no
    // longer pending, this raises, and the whole statement (events included) is rolled back.
    sql: `
      CREATE FUNCTION bdsh_refuse_claim(missing bigint) RETURNS integer LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'inbox claim refused: % item(s) no longer pending', missing USING ERRCODE = 'BD001';
      END $$;
    `,
  },
  {
    version: 4,
    name: "ready queue, open turns",
    // Concurrency: the triggers touch a session's ready row only through row-locking upserts and updates
    // that count (`waiting`), so an enqueue racing a claim in another transaction waits for it and adds to
    // what it left; the row goes only when the count it reads under the lock reaches zero. `position` may
    // stay a little older than the truth after such a race (it orders claims; it decides nothing).
    sql: `
      CREATE TABLE ready_sessions (
        session_id text COLLATE "C" PRIMARY KEY,
        position bigint NOT NULL,
        waiting integer NOT NULL
      );
      CREATE INDEX ready_sessions_order ON ready_sessions (position);
      INSERT INTO ready_sessions (session_id, position, waiting)
        SELECT session_id, min(position), count(*) FROM inbox
        WHERE claimed_at IS NULL AND discarded_at IS NULL AND mode <> 'inject' GROUP BY session_id;

      CREATE FUNCTION bdsh_ready_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ready_sessions AS r (session_id, position, waiting) VALUES (NEW.session_id, NEW.position, 1)
          ON CONFLICT (session_id) DO UPDATE SET
            waiting = r.waiting + 1, position = least(r.position, EXCLUDED.position);
        RETURN NULL;
      END $$;
      CREATE TRIGGER inbox_ready_added AFTER INSERT ON inbox FOR EACH ROW
        WHEN (NEW.mode <> 'inject' AND NEW.claimed_at IS NULL AND NEW.discarded_at IS NULL)
        EXECUTE FUNCTION bdsh_ready_added();

      CREATE FUNCTION bdsh_ready_taken() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        remaining integer;
      BEGIN
        UPDATE ready_sessions AS r SET
          waiting = r.waiting - 1,
          position = coalesce((SELECT min(i.position) FROM inbox i WHERE i.session_id = NEW.session_id
            AND i.claimed_at IS NULL AND i.discarded_at IS NULL AND i.mode <> 'inject'), r.position)
          WHERE r.session_id = NEW.session_id
          RETURNING r.waiting INTO remaining;
        IF remaining <= 0 THEN
          DELETE FROM ready_sessions WHERE session_id = NEW.session_id AND waiting <= 0;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER inbox_ready_taken AFTER UPDATE OF claimed_at, discarded_at ON inbox FOR EACH ROW
        WHEN (NEW.mode <> 'inject' AND OLD.claimed_at IS NULL AND OLD.discarded_at IS NULL
          AND (NEW.claimed_at IS NOT NULL OR NEW.discarded_at IS NOT NULL))
        EXECUTE FUNCTION bdsh_ready_taken();

      ALTER TABLE sessions ADD COLUMN turn_open boolean NOT NULL DEFAULT false;
      UPDATE sessions s SET turn_open = true WHERE (
        SELECT e.type FROM events e WHERE e.session_id = s.id AND e.type IN ('turn/start', 'turn/end')
        ORDER BY e.seq DESC LIMIT 1
      ) = 'turn/start';
      CREATE INDEX sessions_turn_open ON sessions (id) WHERE turn_open;
      CREATE INDEX leases_expiry ON leases (expires_at);
    `,
  },
  {
    version: 5,
    name: "cancel requests",
    // The metadata test is guarded by the text (CASE), so no row's metadata is parsed unless it names a control.
    sql: `
      UPDATE inbox SET mode = 'cancel'
        WHERE mode = 'inject' AND claimed_at IS NULL AND discarded_at IS NULL
          AND CASE WHEN metadata LIKE '%"control"%' THEN metadata::jsonb ->> 'control' = 'cancel' ELSE false END;

      CREATE OR REPLACE FUNCTION bdsh_ready_taken() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        remaining integer;
      BEGIN
        UPDATE ready_sessions AS r SET
          waiting = r.waiting - 1,
          position = coalesce((SELECT min(i.position) FROM inbox i WHERE i.session_id = NEW.session_id
            AND i.claimed_at IS NULL AND i.discarded_at IS NULL AND i.mode IN ('followup', 'steer')), r.position)
          WHERE r.session_id = NEW.session_id
          RETURNING r.waiting INTO remaining;
        IF remaining <= 0 THEN
          DELETE FROM ready_sessions WHERE session_id = NEW.session_id AND waiting <= 0;
        END IF;
        RETURN NULL;
      END $$;

      DROP TRIGGER inbox_ready_added ON inbox;
      CREATE TRIGGER inbox_ready_added AFTER INSERT ON inbox FOR EACH ROW
        WHEN (NEW.mode IN ('followup', 'steer') AND NEW.claimed_at IS NULL AND NEW.discarded_at IS NULL)
        EXECUTE FUNCTION bdsh_ready_added();

      DROP TRIGGER inbox_ready_taken ON inbox;
      CREATE TRIGGER inbox_ready_taken AFTER UPDATE OF claimed_at, discarded_at ON inbox FOR EACH ROW
        WHEN (NEW.mode IN ('followup', 'steer') AND OLD.claimed_at IS NULL AND OLD.discarded_at IS NULL
          AND (NEW.claimed_at IS NOT NULL OR NEW.discarded_at IS NOT NULL))
        EXECUTE FUNCTION bdsh_ready_taken();
    `,
  },
  {
    version: 6,
    name: "harness keys",
    sql: `
      CREATE TABLE harness_keys (name text COLLATE "C" PRIMARY KEY, value text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
    `,
  },
  {
    version: 7,
    name: "process receipts",
    // Tools-runtime: a background job's checkpoint while it runs, its redacted receipt after.
    sql: `
      CREATE TABLE process_receipts (
        session_id text COLLATE "C" NOT NULL,
        job_id text COLLATE "C" NOT NULL,
        kind text NOT NULL,
        label text NOT NULL,
        command text NOT NULL,
        backend text NOT NULL,
        host text NOT NULL,
        pid integer,
        start_ticks bigint,
        started_at bigint NOT NULL,
        state text NOT NULL,
        exit_code integer,
        signal text,
        finished_at bigint,
        output_tail text NOT NULL,
        output_bytes bigint NOT NULL,
        read_bytes bigint NOT NULL,
        output_blob_id text,
        note text,
        PRIMARY KEY (session_id, job_id)
      );
      CREATE INDEX process_receipts_running ON process_receipts (host) WHERE state = 'running';
      CREATE INDEX process_receipts_finished ON process_receipts (finished_at) WHERE state <> 'running';
    `,
  },
  {
    version: 8,
    name: "queue a message and claim its session in one call",
    // `enqueueAndClaim` (store.ts): a function, so that its statements run one after another, each seeing
    // what committed before it (READ COMMITTED takes a snapshot per statement in a function): the read that
    // follows the lease's capture sees every append its last holder made, as a separate readForDrive
    // would. One statement with CTEs could not: its reads share one snapshot taken before the lease's
    // latest version, which ON CONFLICT may update. Rows: the events after p_after (none when null), then
    // one final row with the new row, whether the lease was taken, and (taken) the pending input and the
    // session row, as JSON in readForDrive's shapes.
    sql: enqueueClaimFunction("CREATE FUNCTION", false),
  },
  {
    version: 9,
    name: "an enqueue-and-claim says whether it claimed",
    // The same function, its notification sent after the claim and saying whether the session was taken
    // (`claimed`): the other servers then make no claim pass for that row (their sweep still covers a
    // claimer that dies). NOTIFY is delivered at commit, so moving it changes nothing else.
    sql: enqueueClaimFunction("CREATE OR REPLACE FUNCTION", true),
  },
];
