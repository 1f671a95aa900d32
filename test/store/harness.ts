/**
 * Fresh databases for store tests: a file in a tmp dir (SQLite) or a fresh schema in the run's database
 * (PostgreSQL, `search_path` set through the connection string's `options`). Every store a test opens is
 * closed and the database removed afterwards.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { PostgresStore } from "../../src/store/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { testDatabaseUrl } from "../support/database.js";

/** How a child process opens the same database (see fixtures/open.ts). */
export type StoreTarget = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };

export type FreshDatabase = {
  target: StoreTarget;
  /** Another store instance (another connection) on this database; migrated unless told otherwise. */
  open(options?: { migrate?: boolean; applicationName?: string }): Promise<Store>;
  /** Runs SQL directly, bypassing the store (for states the API cannot produce). */
  exec(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  dispose(): Promise<void>;
};

export type StoreHarness = {
  name: "sqlite" | "postgres";
  /** SQLite tells other processes' commits as `resync`; PostgreSQL names the session and seq. */
  crossProcessNotificationsArePrecise: boolean;
  fresh(): Promise<FreshDatabase>;
};

/** The table a test runs on both stores with: `describe.each(bothStores())("… on %s", (name, harness) => …)`. */
export function bothStores(): Array<[string, StoreHarness]> {
  return [
    ["SQLite", sqliteHarness()],
    ["PostgreSQL", postgresHarness(testDatabaseUrl())],
  ];
}

export function sqliteHarness(): StoreHarness {
  return {
    name: "sqlite",
    crossProcessNotificationsArePrecise: false,
    async fresh() {
      const dir = mkdtempSync(join(tmpdir(), "bdsh-store-"));
      const path = join(dir, "bdsh.db");
      const stores: Store[] = [];
      return {
        target: { kind: "sqlite", path },
        async open(options = {}) {
          const store = new SqliteStore(path, { pollIntervalMs: 20 });
          stores.push(store);
          if (options.migrate !== false) await store.migrate();
          return store;
        },
        async exec(sql, params = []) {
          const db = new Database(path);
          try {
            const statement = db.prepare(sql);
            if (statement.reader) return statement.all(...params) as Record<string, unknown>[];
            statement.run(...params);
            return [];
          } finally {
            db.close();
          }
        },
        async dispose() {
          await Promise.all(stores.map((s) => s.close()));
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

export function postgresHarness(databaseUrl: string): StoreHarness {
  return {
    name: "postgres",
    crossProcessNotificationsArePrecise: true,
    async fresh() {
      const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
      await adminQuery(databaseUrl, `CREATE SCHEMA ${schema}`);
      const url = new URL(databaseUrl);
      url.searchParams.set("options", `-c search_path=${schema}`);
      const stores: Store[] = [];
      return {
        target: { kind: "postgres", url: url.toString() },
        async open(options = {}) {
          const store = new PostgresStore({
            connectionString: url.toString(),
            applicationName: options.applicationName ?? `bdsh-test-${schema}`,
            poolSize: 4,
          });
          stores.push(store);
          if (options.migrate !== false) await store.migrate();
          return store;
        },
        exec: (sql, params) => adminQuery(url.toString(), sql, params),
        async dispose() {
          await Promise.all(stores.map((s) => s.close()));
          await adminQuery(databaseUrl, `DROP SCHEMA ${schema} CASCADE`);
        },
      };
    },
  };
}

export async function adminQuery(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}
