/**
 * Real concurrency (issue 2 item 6): separate OS processes on one database, for both stores.
 * Each fixture prints lines of JSON; a "go" line on stdin is the barrier that makes racers fire together.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newEvent } from "../../src/log/events.js";
import { POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from "../../src/store/migrations.js";
import type { Store } from "../../src/store/store.js";
import { testDatabaseUrl } from "../support/database.js";
import { fixtureArgv } from "../support/fixtures.js";
import { type FreshDatabase, postgresHarness, type StoreHarness, sqliteHarness } from "./harness.js";

type Fixture = {
  child: ChildProcess;
  /** The next printed JSON line that has `key`. */
  next(key: string): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
};

const live: ChildProcess[] = [];

function runFixture(script: string, args: string[]): Fixture {
  const path = fileURLToPath(new URL(`./fixtures/${script}.ts`, import.meta.url));
  const child = spawn(process.execPath, [...fixtureArgv(path), ...args], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  live.push(child);
  const messages: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => {
    messages.push(JSON.parse(line) as Record<string, unknown>);
    for (const w of waiters.splice(0)) w();
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  let read = 0;
  return {
    child,
    exited,
    async next(key) {
      for (;;) {
        while (read < messages.length) {
          const m = messages[read++]!;
          if (key in m) return m;
        }
        const more = new Promise<void>((resolve) => waiters.push(resolve));
        const gone = exited.then((code) => {
          if (read >= messages.length) throw new Error(`${script} exited (${code}) before printing "${key}"`);
        });
        await Promise.race([more, gone]);
      }
    },
  };
}

afterEach(() => {
  for (const child of live.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

const harnesses: StoreHarness[] = [sqliteHarness(), postgresHarness(testDatabaseUrl())];

for (const harness of harnesses) {
  describe(`${harness.name} store shared by OS processes`, () => {
    let db: FreshDatabase;
    const target = () => JSON.stringify(db.target);

    beforeEach(async () => {
      db = await harness.fresh();
    });
    afterEach(async () => {
      await db.dispose();
    });

    it("of two processes appending at the same expected seq exactly one wins each seq", async () => {
      const store = await db.open();
      const session = await store.createSession();
      const rounds = 200; // both race at seq 0, then at whatever seq each last read
      const racers = ["p1", "p2"].map((name) =>
        runFixture("append-race", [target(), session.id, String(rounds), name]),
      );
      await Promise.all(racers.map((r) => r.next("ready")));
      for (const r of racers) r.child.stdin!.end("go\n");
      const results = await Promise.all(racers.map((r) => r.next("wins")));
      expect(await Promise.all(racers.map((r) => r.exited))).toEqual([0, 0]);

      expect(results.map((r) => r.firstRound).sort()).toEqual(["conflict", "won"]);
      expect(results.reduce((sum, r) => sum + Number(r.wins), 0)).toBe(rounds);

      const events = await store.read(session.id);
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: rounds }, (_, i) => i + 1));
      for (const r of results) {
        const written = events.filter((e) => e.type === "user/message" && e.data.text === r.name);
        expect(written).toHaveLength(Number(r.wins));
      }
    });

    it("two processes migrating a fresh database both succeed and apply each migration once", async () => {
      const migrators = [1, 2].map(() => runFixture("migrate", [target()]));
      await Promise.all(migrators.map((m) => m.next("ready")));
      for (const m of migrators) m.child.stdin!.end("go\n");
      await Promise.all(migrators.map((m) => m.next("migrated")));
      expect(await Promise.all(migrators.map((m) => m.exited))).toEqual([0, 0]);

      const expected = (harness.name === "sqlite" ? SQLITE_MIGRATIONS : POSTGRES_MIGRATIONS).map(
        (m) => m.version,
      );
      const rows = await db.exec("SELECT version FROM schema_migrations ORDER BY version");
      expect(rows.map((r) => Number(r.version))).toEqual(expected);
      const store = await db.open();
      expect(await store.createSession()).toMatchObject({ lastSeq: 0 });
    });

    it("a lease held by a process killed with SIGKILL is taken over after it expires, not before", async () => {
      const store: Store = await db.open();
      const name = "session:killed";
      const ttl = 1500;
      const holder = runFixture("lease-holder", [target(), name, "holder", String(ttl)]);
      const held = (await holder.next("lease")).lease as { fence: number };
      holder.child.kill("SIGKILL");
      await holder.exited;

      // Not before: the dead holder's lease is still live for up to a ttl.
      const lapsing = await store.getLease(name);
      expect(lapsing).toMatchObject({ owner: "holder", fence: held.fence });
      expect(await store.acquireLease(name, "too-early", ttl)).toBeUndefined();

      const taker = runFixture("lease-taker", [target(), name, "taker", String(ttl)]);
      const taken = await taker.next("lease");
      expect(await taker.exited).toBe(0);
      const lease = taken.lease as { owner: string; fence: number; expiresAt: number };
      expect(lease).toMatchObject({ owner: "taker", fence: held.fence + 1 });
      // Taken at expiresAt - ttl (the store's clock), which is after the dead holder's lease ran out.
      expect(lease.expiresAt - ttl).toBeGreaterThanOrEqual(lapsing!.expiresAt);
      expect(
        await store.append(
          (await store.createSession()).id,
          [newEvent("agent/status", { status: "idle" })],
          0,
        ),
      ).toHaveLength(1);
    });
  });
}
