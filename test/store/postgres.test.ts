import pg from "pg";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { PostgresStore } from "../../src/store/postgres-store.js";
import { sessionLeaseName } from "../../src/store/store.js";
import { testDatabaseUrl } from "../support/database.js";
import { waitUntil } from "../support/wait.js";
import { storeContract } from "./contract.js";
import { postgresHarness } from "./harness.js";

describe("PostgresStore", () => {
  storeContract(postgresHarness(testDatabaseUrl()));
});

describe("store.postgres_synchronous_commit", () => {
  type WithPool = { pool: { query(sql: string): Promise<{ rows: Array<{ v: string }> }> } };
  /** The pool's own session setting, read through one of its connections. */
  const settingOf = async (store: PostgresStore) => {
    const { pool } = store as unknown as WithPool;
    return (await pool.query("SELECT current_setting('synchronous_commit') AS v")).rows[0]!.v;
  };

  it("is the database's own (on) by default, and off on every pooled connection when asked", async () => {
    const databaseUrl = testDatabaseUrl();
    const byDefault = (await openStore({ home: "/nonexistent", databaseUrl })) as PostgresStore;
    const off = (await openStore({
      home: "/nonexistent",
      databaseUrl,
      postgresSynchronousCommit: "off",
    })) as PostgresStore;
    try {
      expect(await settingOf(byDefault)).toBe("on");
      expect(await settingOf(off)).toBe("off");
      const session = await off.createSession();
      await off.append(session.id, [{ type: "agent/status", data: { status: "running" } }], 0);
      expect((await byDefault.read(session.id)).map((e) => e.type)).toEqual(["agent/status"]);
    } finally {
      await byDefault.close();
      await off.close();
    }
  });

  it("effects (default) skips the WAL flush only for commit-only appends, without touching the connection", async () => {
    const databaseUrl = testDatabaseUrl();
    const open = (mode?: "on" | "off") =>
      openStore({
        home: "/nonexistent",
        databaseUrl,
        ...(mode ? { postgresSynchronousCommit: mode } : {}),
      }) as Promise<PostgresStore>;
    /** The append statements a store ran, by name. */
    const appendsOf = async (store: PostgresStore) => {
      const { pool } = store as unknown as { pool: { query(...args: unknown[]): unknown } };
      const names: string[] = [];
      const query = pool.query.bind(pool);
      pool.query = (...args: unknown[]) => {
        const name = (args[0] as { name?: string }).name;
        if (name?.startsWith("bdsh_append")) names.push(name);
        return query(...args);
      };
      const session = await store.createSession();
      const event = [{ type: "agent/status" as const, data: { status: "idle" as const } }];
      await store.append(session.id, event, 0, { durability: "commit" });
      await store.append(session.id, event, 1, { durability: "disk" });
      await store.append(session.id, event, 2);
      expect((await store.read(session.id)).map((e) => e.seq)).toEqual([1, 2, 3]);
      return names;
    };
    const effects = await open();
    const on = await open("on");
    try {
      expect(await appendsOf(effects)).toEqual(["bdsh_append_commit", "bdsh_append", "bdsh_append"]);
      expect(await appendsOf(on)).toEqual(["bdsh_append", "bdsh_append", "bdsh_append"]);
      // The statement sets synchronous_commit for its own transaction only.
      expect(await settingOf(effects)).toBe("on");
    } finally {
      await effects.close();
      await on.close();
    }
  });

  it("holds with a connection string that carries its own startup options (a search_path)", async () => {
    const url = new URL(testDatabaseUrl());
    url.searchParams.set("options", "-c search_path=public");
    const off = (await openStore({
      home: "/nonexistent",
      databaseUrl: url.toString(),
      postgresSynchronousCommit: "off",
    })) as PostgresStore;
    try {
      expect(await settingOf(off)).toBe("off");
    } finally {
      await off.close();
    }
  });
});

describe("store.postgres_pool_size", () => {
  it("caps the connections the pool opens (default 10)", async () => {
    type WithPool = { pool: { totalCount: number; query(sql: string): Promise<unknown> } };
    const databaseUrl = testDatabaseUrl();
    const small = (await openStore({
      home: "/nonexistent",
      databaseUrl,
      postgresPoolSize: 2,
    })) as PostgresStore;
    const byDefault = (await openStore({ home: "/nonexistent", databaseUrl })) as PostgresStore;
    try {
      const busy = (store: PostgresStore, n: number) =>
        Promise.all(
          Array.from({ length: n }, () => (store as unknown as WithPool).pool.query("SELECT pg_sleep(0.05)")),
        );
      await busy(small, 6);
      await busy(byDefault, 12);
      expect((small as unknown as WithPool).pool.totalCount).toBe(2);
      expect((byDefault as unknown as WithPool).pool.totalCount).toBe(10);
    } finally {
      await small.close();
      await byDefault.close();
    }
  });
});

describe("enqueueAndClaim on PostgreSQL", () => {
  it("reads, after taking a lease its holder let go of meanwhile, every event that holder committed with it", async () => {
    const fresh = await postgresHarness(testDatabaseUrl()).fresh();
    const holder = new pg.Client({ connectionString: (fresh.target as { url: string }).url });
    try {
      const store = await fresh.open();
      const s = await store.createSession();
      const lease = sessionLeaseName(s.id);
      await store.acquireLease(lease, "server-b", 60_000);
      await store.append(s.id, [{ type: "agent/status", data: { status: "running" } }], 0, {
        leaseOwner: "server-b",
      });
      // server-b's last append and its release, one transaction, left open: the claim waits on the lease.
      await holder.connect();
      await holder.query("BEGIN");
      await holder.query("UPDATE leases SET owner = NULL, expires_at = now() WHERE name = $1", [lease]);
      await holder.query(
        `INSERT INTO events (session_id, seq, type, at, data) VALUES ($1, 2, 'agent/status', $2, $3)`,
        [s.id, new Date().toISOString(), JSON.stringify({ status: "idle" })],
      );
      await holder.query("UPDATE sessions SET last_seq = 2 WHERE id = $1", [s.id]);
      const claiming = store.enqueueAndClaim(
        s.id,
        { queue: "next-turn", mode: "followup", source: "human", text: "hi" },
        { owner: "server-a", ttlMs: 60_000, after: 0 },
      );
      await waitUntil(
        async () =>
          (
            await fresh.exec(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%bdsh_enqueue_claim%'",
            )
          )[0]!.n === 1,
        "the claim to wait on the holder's lease row",
      );
      await holder.query("COMMIT");
      const { claimed } = await claiming;
      // Taken on the lease's latest version: the read that follows sees what committed with the release.
      expect(claimed?.events.map((e) => e.seq)).toEqual([1, 2]);
      expect(claimed?.session?.lastSeq).toBe(2);
      expect((await store.getLease(lease))?.owner).toBe("server-a");
    } finally {
      await holder.end().catch(() => undefined);
      await fresh.dispose();
    }
  });
});
