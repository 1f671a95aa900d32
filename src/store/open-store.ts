/**
 * Picks the store (ARCHITECTURE "Storage"): PostgreSQL when a database URL is given, else the embedded
 * SQLite file `<home>/bdsh.db`, with the home directory created private (0700). The returned store is
 * migrated and ready.
 */
import { mkdirSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import type { PostgresSynchronousCommit } from "./postgres-store.js";
import type { SqliteSynchronous } from "./sqlite-store.js";
import type { Store } from "./store.js";

export type OpenStoreOptions = {
  /** `DATABASE_URL`: when set, PostgreSQL. */
  databaseUrl?: string;
  /** `$BDSH_HOME` (default `~/.bdsh`, resolved by the caller). */
  home: string;
  /** SQLite: how often to look for other processes' commits while subscribed. */
  pollIntervalMs?: number;
  /**
   * SQLite: `effects` (default) honours each append's `durability` (an fsync only for `disk` appends);
   * `normal` never fsyncs on commit (survives a killed process, not a power loss); `full` fsyncs every one.
   */
  sqliteSynchronous?: SqliteSynchronous;
  /**
   * PostgreSQL: `effects` (default) honours each append's `durability`; `on` waits for the WAL flush of
   * every commit; `off` answers once a commit is in the server's memory: durable against any crash of ours,
   * not against a crash of the database server (it may lose the last fraction of a second of commits, never
   * consistency).
   */
  postgresSynchronousCommit?: PostgresSynchronousCommit;
  /** PostgreSQL: the pool's connections (`store.postgres_pool_size`, default 10). */
  postgresPoolSize?: number;
};

export const SQLITE_FILE = "bdsh.db";

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const store = await createStore(options);
  try {
    await store.migrate();
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  return store;
}

/**
 * The store `openStore` would open, not yet migrated. Each store's module (and its driver: `pg`, or the
 * native better-sqlite3) is loaded only when chosen, so a process pays for one database driver, not two.
 */
export async function createStore(options: OpenStoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    const { PostgresStore } = await import("./postgres-store.js");
    return new PostgresStore({
      connectionString: withDefaultUser(options.databaseUrl),
      ...(options.postgresPoolSize === undefined ? {} : { poolSize: options.postgresPoolSize }),
      ...(options.postgresSynchronousCommit === undefined
        ? {}
        : { synchronousCommit: options.postgresSynchronousCommit }),
    });
  }
  const { SqliteStore } = await import("./sqlite-store.js");
  mkdirSync(options.home, { recursive: true, mode: 0o700 });
  return new SqliteStore(join(options.home, SQLITE_FILE), {
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    ...(options.sqliteSynchronous === undefined ? {} : { synchronous: options.sqliteSynchronous }),
  });
}

/**
 * `pg` takes a missing user name from `$USER`, which services and containers often lack; fall back to the
 * operating-system user, as `psql` does, so `postgres://host/db` works everywhere it works for psql.
 */
function withDefaultUser(connectionString: string): string {
  if (process.env.PGUSER || process.env.USER) return connectionString;
  try {
    const url = new URL(connectionString);
    if (url.username || url.searchParams.has("user")) return connectionString;
    url.username = userInfo().username;
    return url.toString();
  } catch {
    return connectionString;
  }
}
