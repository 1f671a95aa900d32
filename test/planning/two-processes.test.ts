/**
 * P4 + S8 on PostgreSQL: several processes race to claim the same goal rounds and sweep the same due
 * schedules. Every round and every occurrence is delivered exactly once — by one process, as one inbox item.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { nextOccurrence, timingFrom } from "../../src/planning/schedule-timing.js";
import type { Store } from "../../src/store/store.js";
import { type FreshDatabase, postgresHarness } from "../store/harness.js";
import { testDatabaseUrl } from "../support/database.js";
import { fixtureArgv } from "../support/fixtures.js";

const WORKER = fileURLToPath(new URL("./fixtures/claim-worker.ts", import.meta.url));
const PROCESSES = 3;
const ROUNDS = 30;
const SCHEDULES = 20;

function worker(env: NodeJS.ProcessEnv): Promise<{ rounds: number[]; reminders: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...fixtureArgv(WORKER)], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out.trim())) : reject(new Error(`worker exited ${code}`)),
    );
  });
}

describe("P4, S8: two processes on one PostgreSQL", () => {
  let db: FreshDatabase;
  afterEach(async () => {
    await db.dispose();
  });

  it("never deliver the same goal round or schedule occurrence twice", async () => {
    db = await postgresHarness(testDatabaseUrl()).fresh();
    const store: Store = await db.open();
    if (db.target.kind !== "postgres") throw new Error("postgres expected");
    const session = await store.createSession();
    const goal = await store.planning.createGoal(session.id, { objective: "race", maxRounds: ROUNDS });
    const now = Date.parse("2026-03-01T12:00:00Z");
    for (let i = 0; i < SCHEDULES; i++) {
      // Created an hour ago; several occurrences were missed: only the latest is delivered.
      const timing = timingFrom({ every_seconds: 600 }, now - 3_600_000 - i * 1000, 60);
      await store.planning.createSchedule(session.id, {
        title: `s${i}`,
        prompt: `p${i}`,
        timing,
        nextAt: nextOccurrence(timing, now - 3_600_000 - i * 1000),
      });
    }
    const results = await Promise.all(
      Array.from({ length: PROCESSES }, () =>
        worker({
          DATABASE_URL: db.target.kind === "postgres" ? db.target.url : "",
          SESSION_ID: session.id,
          GOAL_ID: goal.id,
          ROUNDS: String(ROUNDS),
          SWEEPS: "5",
          NOW: String(now),
        }),
      ),
    );
    const rounds = results.flatMap((r) => r.rounds).sort((a, b) => a - b);
    expect(rounds).toEqual(Array.from({ length: ROUNDS }, (_, i) => i + 1));
    const reminders = results.flatMap((r) => r.reminders);
    expect(new Set(reminders).size).toBe(reminders.length);
    expect(reminders).toHaveLength(SCHEDULES);
    const pending = await store.pendingInbox(session.id);
    expect(pending.filter((i) => i.source === "goal-round")).toHaveLength(ROUNDS);
    expect(pending.filter((i) => i.source === "schedule")).toHaveLength(SCHEDULES);
    expect(await store.planning.getGoal(session.id)).toMatchObject({ roundsStarted: ROUNDS });
    for (const row of await store.planning.listSchedules(session.id)) expect(row.nextAt).toBeGreaterThan(now);
  });
});
