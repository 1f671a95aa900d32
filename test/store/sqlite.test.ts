import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SqliteStore, type SqliteSynchronous } from "../../src/store/sqlite-store.js";
import type { AppendDurability } from "../../src/store/store.js";
import { storeContract } from "./contract.js";
import { sqliteHarness } from "./harness.js";

describe("SqliteStore", () => {
  storeContract(sqliteHarness());
});

describe("store.sqlite_synchronous", () => {
  type WithDb = { db: { pragma(source: string, options?: { simple: boolean }): unknown } };

  /** The `synchronous` level each append committed under (read inside the transaction), and the level after. */
  async function levelsFor(
    mode: SqliteSynchronous | undefined,
    durabilities: (AppendDurability | undefined)[],
  ) {
    const home = mkdtempSync(join(tmpdir(), "bdsh-sqlite-sync-"));
    const store = new SqliteStore(join(home, "bdsh.db"), mode ? { synchronous: mode } : {});
    try {
      await store.migrate();
      const { db } = store as unknown as WithDb;
      const level = () => db.pragma("synchronous", { simple: true });
      const seen: unknown[] = [];
      const session = await store.createSession();
      // SQLite reads the level at commit: record it inside each append's transaction.
      const s = (store as unknown as { s: { advanceSession: { run(...a: unknown[]): unknown } } }).s;
      const advance = s.advanceSession.run.bind(s.advanceSession);
      s.advanceSession.run = (...args: unknown[]) => {
        seen.push(level());
        return advance(...args);
      };
      let seq = 0;
      for (const durability of durabilities) {
        await store.append(
          session.id,
          [{ type: "agent/status", data: { status: "idle" } }],
          seq++,
          durability ? { durability } : {},
        );
      }
      return { seen, after: level() };
    } finally {
      await store.close();
      rmSync(home, { recursive: true, force: true });
    }
  }

  const NORMAL = 1;
  const FULL = 2;

  it("effects (default): a disk append commits under FULL, a commit-only one under NORMAL", async () => {
    expect(await levelsFor(undefined, ["commit", "disk", undefined])).toEqual({
      seen: [NORMAL, FULL, FULL],
      after: NORMAL,
    });
  });

  it("full and normal override every append's choice", async () => {
    expect((await levelsFor("full", ["commit", "disk"])).seen).toEqual([FULL, FULL]);
    expect((await levelsFor("normal", ["commit", "disk"])).seen).toEqual([NORMAL, NORMAL]);
  });
});
