/**
 * Issue 16 item 6 on both stores: the migration that made a cross-server cancel (L7) an inbox row of its own
 * kind converts the pending marker rows of the old scheme (an inject marked `metadata.control: "cancel"`),
 * so a database upgraded while a cancel was in flight neither shows the marker to a model nor loses the
 * request. A marker a step already spliced stays the inject it was delivered as. What the new kind does
 * afterwards is the store contract's (contract.ts, "keeps a cancel request apart from input").
 */
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from "../../src/store/migrations.js";
import type { Store } from "../../src/store/store.js";
import { testDatabaseUrl } from "../support/database.js";
import { type FreshDatabase, postgresHarness, sqliteHarness } from "./harness.js";

let fresh: FreshDatabase | undefined;
afterEach(async () => {
  await fresh?.dispose();
  fresh = undefined;
});

const MARKER_TEXT = "The user cancelled the running turn. Stop what you are doing.";
const MARKER_METADATA = JSON.stringify({ control: "cancel" });

/** Rows as the old scheme wrote them: [id, mode, queue, metadata, claimed]. */
const BEFORE = [
  ["i-followup", "followup", "next-turn", "{}", false],
  ["i-inject", "inject", "next-step", JSON.stringify({ note: "control" }), false],
  ["i-marker", "inject", "next-step", MARKER_METADATA, false],
  ["i-spliced", "inject", "next-step", MARKER_METADATA, true],
] as const;

async function expectConverted(store: Store, modes: Record<string, string>): Promise<void> {
  expect((await store.pendingInbox("s")).map((i) => i.id)).toEqual(["i-followup", "i-inject"]);
  expect(modes).toEqual({
    "i-followup": "followup",
    "i-inject": "inject",
    "i-marker": "cancel",
    "i-spliced": "inject",
  });
  // The request is there to be taken; the session is still ready for its follow-up, and only for that.
  expect(await store.takeCancelRequests("s")).toBe(1);
  expect(await store.takeCancelRequests("s")).toBe(0);
  expect(await store.claimPendingSessions("me", 60_000, 10)).toEqual(["s"]);
  // The triggers the migration replaced still keep the ready queue: the follow-up taken, nothing is ready.
  await store.append("s", [{ type: "agent/status", data: { status: "idle" } }], 0, {
    leaseOwner: "me",
    claimInbox: ["i-followup"],
  });
  await store.releaseLease("session:s", "me");
  expect(await store.claimPendingSessions("other", 60_000, 10)).toEqual([]);
  await store.requestCancel("s");
  expect(await store.claimPendingSessions("other", 60_000, 10)).toEqual([]);
}

describe("the cancel-request migration (issue 16 item 6)", () => {
  it("converts pending cancel markers on SQLite", async () => {
    fresh = await sqliteHarness().fresh();
    await fresh.open({ migrate: false });
    const path = (fresh.target as { path: string }).path;
    const db = new Database(path);
    db.exec(
      "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    );
    for (const m of SQLITE_MIGRATIONS.filter((m) => m.version < 4)) {
      db.exec(m.sql);
      db.prepare("INSERT INTO schema_migrations VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        "2026-01-01T00:00:00Z",
      );
    }
    const at = "2026-01-01T00:00:00.000Z";
    db.prepare(
      "INSERT INTO sessions (id, kind, status, created_at, updated_at, last_seq) VALUES ('s', 'main', 'idle', ?, ?, 0)",
    ).run(at, at);
    for (const [id, mode, queue, metadata, claimed] of BEFORE)
      db.prepare(
        `INSERT INTO inbox (id, session_id, queue, mode, source, text, metadata, created_at, claimed_at)
         VALUES (?, 's', ?, ?, 'human', ?, ?, ?, ?)`,
      ).run(id, queue, mode, mode === "followup" ? "hello" : MARKER_TEXT, metadata, at, claimed ? at : null);
    db.close();
    const store = await fresh.open();
    const rows = (await fresh.exec("SELECT id, mode FROM inbox")) as Array<{ id: string; mode: string }>;
    await expectConverted(store, Object.fromEntries(rows.map((r) => [r.id, r.mode])));
  });

  it("converts pending cancel markers on PostgreSQL", async () => {
    fresh = await postgresHarness(testDatabaseUrl()).fresh();
    await fresh.open({ migrate: false });
    const client = new pg.Client({ connectionString: (fresh.target as { url: string }).url });
    await client.connect();
    try {
      await client.query(
        "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      for (const m of POSTGRES_MIGRATIONS.filter((m) => m.version < 5)) {
        await client.query(m.sql);
        await client.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
          m.version,
          m.name,
        ]);
      }
      await client.query("INSERT INTO sessions (id, kind, status) VALUES ('s', 'main', 'idle')");
      for (const [id, mode, queue, metadata, claimed] of BEFORE)
        await client.query(
          `INSERT INTO inbox (id, session_id, queue, mode, source, text, metadata, claimed_at)
           VALUES ($1, 's', $2, $3, 'human', $4, $5, CASE WHEN $6::boolean THEN now() END)`,
          [id, queue, mode, mode === "followup" ? "hello" : MARKER_TEXT, metadata, claimed],
        );
    } finally {
      await client.end();
    }
    const store = await fresh.open();
    const rows = (await fresh.exec("SELECT id, mode FROM inbox")) as Array<{ id: string; mode: string }>;
    await expectConverted(store, Object.fromEntries(rows.map((r) => [r.id, r.mode])));
  });
});
