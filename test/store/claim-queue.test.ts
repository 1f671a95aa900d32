/**
 * Issue 16 item 12, the claim's shape on both stores: a claim pass must not read the inbox (the statement
 * it replaced grouped every pending inbox row, so a pass grew with the number of waiting sessions). The
 * query plan of each claim statement names no `inbox` table; the ready queue and the open turns are found
 * through their indexes. And the migration that brought the ready queue fills it (and the open-turn flag)
 * from the rows a database already has. The pass's cost with 100,000 waiting sessions is measured in
 * bench/serve/claim.ts.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { newEvent } from "../../src/log/events.js";
import { POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from "../../src/store/migrations.js";
import { SQL as POSTGRES_SQL } from "../../src/store/postgres-statements.js";
import { SQLITE_SQL } from "../../src/store/sqlite-statements.js";
import type { Store } from "../../src/store/store.js";
import { testDatabaseUrl } from "../support/database.js";
import { type FreshDatabase, postgresHarness, sqliteHarness } from "./harness.js";

let fresh: FreshDatabase | undefined;
afterEach(async () => {
  await fresh?.dispose();
  fresh = undefined;
});

/** The sessions and rows a database had before the ready-queue migration, written by the old schema. */
const BEFORE = {
  sessions: ["s-waiting", "s-inject", "s-open", "s-closed"],
  inbox: [
    ["i1", "s-waiting", "next-turn", "followup"],
    ["i2", "s-inject", "next-step", "inject"],
  ],
  events: [
    ["s-open", 1, "turn/start"],
    ["s-closed", 1, "turn/start"],
    ["s-closed", 2, "turn/end"],
  ],
} as const;

async function expectBackfilled(store: Store): Promise<void> {
  expect(await store.claimPendingSessions("me", 60_000, 10)).toEqual(["s-waiting"]);
  expect((await store.claimOrphanedSessions("me", 60_000, 10)).ids).toEqual(["s-open"]);
  // The flag moves with later appends as for any session.
  await store.append("s-open", [newEvent("turn/end", { reason: "interrupted" }, { turn: 1 })], 1, {
    leaseOwner: "me",
  });
  await store.releaseLease("session:s-open", "me");
  expect((await store.claimOrphanedSessions("other", 60_000, 10)).ids).toEqual([]);
}

describe("SQLite claim (issue 16 item 12)", () => {
  it("reads no inbox row but the claimed sessions' cancel requests, by session id", async () => {
    fresh = await sqliteHarness().fresh();
    await fresh.open();
    const db = new Database((fresh.target as { path: string }).path);
    try {
      for (const sql of [
        SQLITE_SQL.claimCandidates,
        SQLITE_SQL.orphanCandidates,
        SQLITE_SQL.nextOrphanLapse,
      ]) {
        const plan = db
          .prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .all(...(sql.includes("LIMIT ?") ? [0, 10] : [0]));
        const details = (plan as Array<{ detail: string }>).map((row) => row.detail).join("\n");
        expect(details).not.toMatch(/\binbox\b/);
        // Each table through an index, never a full scan of it.
        expect(details.split("\n").filter((line) => /^SCAN /.test(line) && !/ USING /.test(line))).toEqual(
          [],
        );
      }
    } finally {
      db.close();
    }
  });

  it("the migration fills the ready queue and the open-turn flag from the rows already there", async () => {
    fresh = await sqliteHarness().fresh();
    await fresh.open({ migrate: false });
    const db = new Database((fresh.target as { path: string }).path);
    const previous = SQLITE_MIGRATIONS.filter((m) => m.version < 3);
    db.exec(
      "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    );
    for (const m of previous) {
      db.exec(m.sql);
      db.prepare("INSERT INTO schema_migrations VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        "2026-01-01T00:00:00Z",
      );
    }
    const at = "2026-01-01T00:00:00.000Z";
    for (const id of BEFORE.sessions)
      db.prepare(
        "INSERT INTO sessions (id, kind, status, created_at, updated_at, last_seq) VALUES (?, 'main', 'idle', ?, ?, ?)",
      ).run(id, at, at, BEFORE.events.filter((e) => e[0] === id).length);
    for (const [id, session, queue, mode] of BEFORE.inbox)
      db.prepare(
        "INSERT INTO inbox (id, session_id, queue, mode, source, text, created_at) VALUES (?, ?, ?, ?, 'human', 'x', ?)",
      ).run(id, session, queue, mode, at);
    for (const [session, seq, type] of BEFORE.events)
      db.prepare(
        "INSERT INTO events (session_id, seq, type, at, turn, data) VALUES (?, ?, ?, ?, 1, '{}')",
      ).run(session, seq, type, at);
    db.close();
    await expectBackfilled(await fresh.open());
  });
});

describe("PostgreSQL claim (issue 16 item 12)", () => {
  const withClient = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: (fresh!.target as { url: string }).url });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };

  it("reads no inbox row but the claimed sessions' cancel requests, by session id", async () => {
    fresh = await postgresHarness(testDatabaseUrl()).fresh();
    await fresh.open();
    for (const statement of [POSTGRES_SQL.claimPendingSessions, POSTGRES_SQL.claimOrphanedSessions]) {
      const plan = await withClient(async (client) => {
        await client.query(`PREPARE claim_plan (text, float8, int) AS ${statement.text}`);
        const { rows } = await client.query("EXPLAIN (FORMAT JSON) EXECUTE claim_plan('x', 1000, 10)");
        return rows[0] as Record<string, unknown>;
      });
      type Node = { "Node Type": string; "Relation Name"?: string; "Index Cond"?: string; Plans?: Node[] };
      const nodes: Node[] = [];
      const walk = (node: Node) => {
        nodes.push(node);
        for (const child of node.Plans ?? []) walk(child);
      };
      walk((plan["QUERY PLAN"] as Array<{ Plan: Node }>)[0]!.Plan);
      // The inbox is touched only to take the claimed sessions' cancel requests, looked up by session id.
      const inbox = nodes.filter((n) => n["Relation Name"] === "inbox" && n["Node Type"] !== "ModifyTable");
      expect(inbox.length).toBeGreaterThan(0);
      for (const node of inbox) expect(node["Index Cond"]).toMatch(/session_id = ANY/);
      expect(nodes.some((n) => n["Relation Name"] === "leases")).toBe(true);
    }
  });

  it("the migration fills the ready queue and the open-turn flag from the rows already there", async () => {
    fresh = await postgresHarness(testDatabaseUrl()).fresh();
    await fresh.open({ migrate: false });
    await withClient(async (client) => {
      await client.query(
        "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      for (const m of POSTGRES_MIGRATIONS.filter((m) => m.version < 4)) {
        await client.query(m.sql);
        await client.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
          m.version,
          m.name,
        ]);
      }
      for (const id of BEFORE.sessions)
        await client.query(
          "INSERT INTO sessions (id, kind, status, last_seq) VALUES ($1, 'main', 'idle', $2)",
          [id, BEFORE.events.filter((e) => e[0] === id).length],
        );
      for (const [id, session, queue, mode] of BEFORE.inbox)
        await client.query(
          "INSERT INTO inbox (id, session_id, queue, mode, source, text) VALUES ($1, $2, $3, $4, 'human', 'x')",
          [id, session, queue, mode],
        );
      for (const [session, seq, type] of BEFORE.events)
        await client.query(
          "INSERT INTO events (session_id, seq, type, at, turn, data) VALUES ($1, $2, $3, 'x', 1, '{}')",
          [session, seq, type],
        );
    });
    await expectBackfilled(await fresh.open());
  });
});
