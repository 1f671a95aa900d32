/**
 * P3 + R1: a `--goal` run SIGKILLed mid-round. After resume the goal is still active but disarmed: no round
 * is queued by itself, and the session waits for a human; a human message runs one turn and no round.
 * On SQLite and on PostgreSQL.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { findPairingError } from "../../src/log/pairing.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import { openStore } from "../../src/store/open-store.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
import { fixtureArgv } from "../support/fixtures.js";
import { waitUntil } from "../support/wait.js";
import { userMessages } from "./fixture.js";

const SCRIPT = fileURLToPath(new URL("./fixtures/goal-agent.ts", import.meta.url));

function start(env: NodeJS.ProcessEnv): {
  child: ChildProcess;
  marks: string[];
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, [...fixtureArgv(SCRIPT)], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const marks: string[] = [];
  child.stdout!.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) if (line.startsWith("MARK ")) marks.push(line.slice(5));
  });
  return { child, marks, exited: new Promise((resolve) => child.on("exit", resolve)) };
}

const reasons = (events: LogEvent[]) => events.flatMap((e) => (e.type === "turn/end" ? [e.data.reason] : []));

for (const kind of ["sqlite", "postgres"] as const) {
  describe(`P3 a --goal run SIGKILLed mid-round, on ${kind}`, () => {
    let fake: FakeProvider;
    beforeAll(async () => {
      fake = await startFakeProvider({ script: [] });
    });
    afterAll(async () => {
      await fake.close();
    });

    it("resumes disarmed: no round runs by itself, and a human message runs one turn and no round", async () => {
      const home = mkdtempSync(join(tmpdir(), "bdsh-goal-crash-"));
      const databaseUrl = kind === "postgres" ? testDatabaseUrl() : undefined;
      const store = await openStore({ home, ...(databaseUrl ? { databaseUrl } : {}) });
      const session = await store.createSession({ title: "goal crash" });
      const base = {
        STORE_HOME: home,
        SESSION_ID: session.id,
        FAKE_URL: fake.url,
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      };
      // Turn 1 claims "done" too early; round 1 starts work and is killed inside the tool.
      fake.setScript((request) => {
        const messages = (request.body?.messages as { role: string; content?: unknown }[]) ?? [];
        // The round's message among those since the last reply: on a loaded machine the harness may add
        // its own context (the time, SP5) after it, so it is not always the last one.
        const since = messages.slice(messages.findLastIndex((m) => m.role === "assistant") + 1);
        if (since.some((m) => typeof m.content === "string" && m.content.startsWith("<goal_round>")))
          return { toolCalls: [{ id: "c1", name: "effect", arguments: {} }] };
        return { text: "Done." };
      });
      const victim = start({ ...base, MODE: "run", PROMPT: "ship the feature" });
      // The process may take a while to start on a loaded machine; it is waited for by its own mark.
      await waitUntil(() => {
        if (victim.child.exitCode !== null) throw new Error(`the run exited (${victim.child.exitCode})`);
        return victim.marks.includes("tool-running");
      }, "the round's tool");
      victim.child.kill("SIGKILL");
      await victim.exited;
      const requestsAtKill = fake.requests.length;
      expect(requestsAtKill).toBe(2);

      const resumer = start({ ...base, MODE: "resume" });
      expect(await resumer.exited).toBe(0);
      let events = await store.read(session.id);
      expect(reasons(events)).toEqual(["completed", "interrupted"]);
      expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
      expect(fake.requests.length).toBe(requestsAtKill); // disarmed: nothing ran by itself
      expect(await store.planning.getGoal(session.id)).toMatchObject({ phase: "active", roundsStarted: 1 });
      expect(await store.pendingInbox(session.id)).toEqual([]);

      const human = start({ ...base, MODE: "resume", PROMPT: "where are we?" });
      expect(await human.exited).toBe(0);
      events = await store.read(session.id);
      expect(fake.requests.length).toBe(requestsAtKill + 1); // one turn, and no round after it
      expect(reasons(events)).toEqual(["completed", "interrupted", "completed"]);
      expect(userMessages(events, "goal-round")).toHaveLength(1);
      expect(await store.planning.getGoal(session.id)).toMatchObject({ phase: "active", roundsStarted: 1 });
      await store.close();
    });
  });
}
