/**
 * Claim-pass benchmark (issue 16 item 12): what one pass of the session runner costs (SessionRunner
 * `claim`: `claimOrphanedSessions`, then `claimPendingSessions` for the room left) with WAITING sessions
 * each holding one pending follow-up, on SQLite (a file in a tmp dir) and PostgreSQL (a fresh database from
 * `BENCH_ADMIN_URL`, default postgres://postgres@127.0.0.1:5432/test, dropped after).
 *
 * Rows are written in bulk with SQL (the inbox triggers keep the ready queue as they do for every insert),
 * then analysed. Each timed pass claims up to ROOM sessions; their leases are released between passes
 * (untimed), so every pass sees all WAITING sessions waiting. Two shapes:
 * - `idle fleet`: WAITING sessions waiting, nothing driving.
 * - `busy fleet`: the same, plus BUSY sessions driving on another server (live lease, open turn) whose
 *   follow-up is the oldest input of all, so every pass walks past them in the ready queue and in the open
 *   turns.
 * For comparison, `old statement` times the candidate query this issue replaced (a GROUP BY over every
 * pending inbox row, read only, no leases taken).
 *
 *   node --import tsx bench/serve/claim.ts   # BENCH_WAITING (default 100000), BENCH_BUSY (1000), BENCH_PASSES (50)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { PostgresStore } from "../../src/store/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const WAITING = Number(process.env.BENCH_WAITING ?? 100_000);
const BUSY = Number(process.env.BENCH_BUSY ?? 1_000);
const PASSES = Number(process.env.BENCH_PASSES ?? 50);
/** Free driving slots per pass (server.max_running_per_server's default order of magnitude). */
const ROOM = 64;
const TTL_MS = 60_000;

const OLD_SQLITE_CANDIDATES = `SELECT i.session_id FROM inbox i
  WHERE i.claimed_at IS NULL AND i.discarded_at IS NULL AND i.mode <> 'inject' AND NOT EXISTS (
    SELECT 1 FROM leases h WHERE h.name = 'session:' || i.session_id AND h.owner IS NOT NULL AND h.expires_at > ?)
  GROUP BY i.session_id ORDER BY min(i.position) LIMIT ?`;
const OLD_POSTGRES_CANDIDATES = `SELECT 'session:' || i.session_id AS name, min(i.position) AS first FROM inbox i
  WHERE i.claimed_at IS NULL AND i.discarded_at IS NULL AND i.mode <> 'inject' AND NOT EXISTS (
    SELECT 1 FROM leases h WHERE h.name = 'session:' || i.session_id AND h.owner IS NOT NULL AND h.expires_at > now())
  GROUP BY i.session_id ORDER BY first LIMIT $1`;

type Stats = { median: number; p95: number; max: number };

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { median: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1]! };
}

const fmt = (s: Stats) =>
  `median ${s.median.toFixed(2)} ms, p95 ${s.p95.toFixed(2)} ms, max ${s.max.toFixed(2)} ms`;

/** One runner pass, as SessionRunner.claim does it; returns the claimed ids. */
async function pass(store: Store, owner: string): Promise<string[]> {
  const orphans = await store.claimOrphanedSessions(owner, TTL_MS, ROOM);
  const left = ROOM - orphans.ids.length;
  const pending = left > 0 ? await store.claimPendingSessions(owner, TTL_MS, left) : [];
  return [...orphans.ids, ...pending];
}

async function timePasses(store: Store): Promise<{ stats: Stats; claimed: number }> {
  const samples: number[] = [];
  let claimed = 0;
  for (let i = 0; i < PASSES + 3; i++) {
    const start = performance.now();
    const ids = await pass(store, "bench-claimer");
    const ms = performance.now() - start;
    if (i >= 3) samples.push(ms); // the first passes warm caches and prepared statements
    claimed = ids.length;
    for (const id of ids) await store.releaseLease(sessionLeaseName(id), "bench-claimer");
  }
  return { stats: stats(samples), claimed };
}

async function timeQuery(run: () => Promise<unknown> | unknown): Promise<Stats> {
  const samples: number[] = [];
  for (let i = 0; i < Math.min(PASSES, 20) + 2; i++) {
    const start = performance.now();
    await run();
    if (i >= 2) samples.push(performance.now() - start);
  }
  return stats(samples);
}

const sessionId = (i: number) => `bench-${String(i).padStart(8, "0")}`;

async function sqlite(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bdsh-bench-claim-"));
  const path = join(dir, "bdsh.db");
  const store = new SqliteStore(path);
  try {
    await store.migrate();
    const db = new Database(path);
    const now = new Date().toISOString();
    const fill = db.transaction((from: number, count: number) => {
      const session = db.prepare(
        "INSERT INTO sessions (id, kind, status, created_at, updated_at) VALUES (?, 'main', 'active', ?, ?)",
      );
      const item = db.prepare(
        "INSERT INTO inbox (id, session_id, queue, mode, source, text, created_at) VALUES (?, ?, 'next-turn', 'followup', 'human', 'go', ?)",
      );
      for (let i = from; i < from + count; i++) {
        session.run(sessionId(i), now, now);
        item.run(`item-${i}`, sessionId(i), now);
      }
    });
    const busy = db.transaction(() => {
      const expires = Date.now() + 3_600_000;
      for (let i = 0; i < BUSY; i++) {
        db.prepare("UPDATE sessions SET turn_open = 1 WHERE id = ?").run(sessionId(i));
        db.prepare("INSERT INTO leases (name, owner, expires_at, fence) VALUES (?, 'elsewhere', ?, 1)").run(
          sessionLeaseName(sessionId(i)),
          expires,
        );
      }
    });
    // Busy sessions first, so their follow-ups are the oldest input.
    fill(0, BUSY);
    fill(BUSY, WAITING);
    db.exec("ANALYZE");
    const oldCandidates = db.prepare(OLD_SQLITE_CANDIDATES);
    const idleOld = await timeQuery(() => oldCandidates.all(Date.now(), ROOM));
    // The idle fleet: take the busy sessions' input away for now (their leases are not there yet).
    db.prepare("UPDATE inbox SET discarded_at = ? WHERE session_id < ?").run(now, sessionId(BUSY));
    const idle = await timePasses(store);
    db.prepare("UPDATE inbox SET discarded_at = NULL WHERE session_id < ?").run(sessionId(BUSY));
    db.exec(`INSERT INTO ready_sessions (session_id, position, waiting)
      SELECT session_id, min(position), count(*) FROM inbox WHERE session_id < '${sessionId(BUSY)}' GROUP BY session_id`);
    busy();
    db.exec("ANALYZE");
    const busyRun = await timePasses(store);
    const busyOld = await timeQuery(() => oldCandidates.all(Date.now(), ROOM));
    db.close();
    console.info(
      `sqlite, ${WAITING} waiting, idle fleet: claim pass ${fmt(idle.stats)} (claims ${idle.claimed})`,
    );
    console.info(
      `sqlite, ${WAITING} waiting + ${BUSY} driving elsewhere: claim pass ${fmt(busyRun.stats)} (claims ${busyRun.claimed})`,
    );
    console.info(
      `sqlite, old statement (candidates only), idle fleet: ${fmt(idleOld)}; busy fleet: ${fmt(busyOld)}`,
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(): Promise<void> {
  const name = `bdsh_bench_claim_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const store = new PostgresStore({ connectionString: url.toString(), poolSize: 4 });
  const db = new pg.Client({ connectionString: url.toString() });
  try {
    await store.migrate();
    await db.connect();
    const fill = async (from: number, count: number) => {
      await db.query(
        `INSERT INTO sessions (id, kind, status) SELECT 'bench-' || lpad(g::text, 8, '0'), 'main', 'active'
         FROM generate_series($1::int, $2::int) g`,
        [from, from + count - 1],
      );
      await db.query(
        `INSERT INTO inbox (id, session_id, queue, mode, source, text)
         SELECT 'item-' || g, 'bench-' || lpad(g::text, 8, '0'), 'next-turn', 'followup', 'human', 'go'
         FROM generate_series($1::int, $2::int) g ORDER BY g`,
        [from, from + count - 1],
      );
    };
    await fill(0, BUSY);
    await fill(BUSY, WAITING);
    await db.query("VACUUM ANALYZE");
    const idleOld = await timeQuery(() => db.query(OLD_POSTGRES_CANDIDATES, [ROOM]));
    await db.query("UPDATE inbox SET discarded_at = now() WHERE session_id < $1", [sessionId(BUSY)]);
    const idle = await timePasses(store);
    await db.query("UPDATE inbox SET discarded_at = NULL WHERE session_id < $1", [sessionId(BUSY)]);
    await db.query(
      `INSERT INTO ready_sessions (session_id, position, waiting)
       SELECT session_id, min(position), count(*) FROM inbox WHERE session_id < $1 GROUP BY session_id`,
      [sessionId(BUSY)],
    );
    await db.query("UPDATE sessions SET turn_open = true WHERE id < $1", [sessionId(BUSY)]);
    await db.query(
      `INSERT INTO leases (name, owner, expires_at, fence)
       SELECT 'session:' || id, 'elsewhere', now() + interval '1 hour', 1 FROM sessions WHERE id < $1`,
      [sessionId(BUSY)],
    );
    await db.query("VACUUM ANALYZE");
    const busyRun = await timePasses(store);
    const busyOld = await timeQuery(() => db.query(OLD_POSTGRES_CANDIDATES, [ROOM]));
    console.info(
      `postgres, ${WAITING} waiting, idle fleet: claim pass ${fmt(idle.stats)} (claims ${idle.claimed})`,
    );
    console.info(
      `postgres, ${WAITING} waiting + ${BUSY} driving elsewhere: claim pass ${fmt(busyRun.stats)} (claims ${busyRun.claimed})`,
    );
    console.info(
      `postgres, old statement (candidates only), idle fleet: ${fmt(idleOld)}; busy fleet: ${fmt(busyOld)}`,
    );
  } finally {
    await db.end().catch(() => undefined);
    await store.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

await sqlite();
await postgres();
