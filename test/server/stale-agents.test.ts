/**
 * Issue 16 item 2, stale cached agents (R2): two session runners (two servers' worth: each its own store
 * connection and owner) on one database, driven by hand (`sweep()`, never started), so which one drives each
 * turn is the test's choice. Runner A drives turn 1 and keeps its agent cached idle; runner B drives turn 2;
 * when A drives turn 3 its cached agent is from before turn 2 and must be rebuilt from the log.
 *
 * The state that shows it: file observations (C18, in memory only). A's turn 1 reads `notes.txt`; turn 3
 * edits it without reading it again. An agent that knows only the log has not read the file (R2: fs
 * observations do not survive), so the edit is refused with "has not been read"; A's stale agent would let
 * it through on the strength of a read from before B's turn.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import type { Agent } from "../../src/loop/agent.js";
import { SessionRunner } from "../../src/server/session-runner.js";
import { openStore } from "../../src/store/open-store.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
import { openTestAgent } from "../support/test-agent.js";
import {
  type Scenario,
  startScenarioProvider,
  testConfig,
  tmpHome,
  toolResults,
  waitForEvent,
} from "./harness.js";

let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;

beforeAll(async () => {
  ({ fake, scenario } = await startScenarioProvider());
});
afterAll(async () => {
  await fake?.close();
});

/** The drive that wrote `agent/status idle` releases the lease just after: a claim before that finds it held. */
async function leaseFree(store: Store, sessionId: string): Promise<void> {
  while (await store.getLease(sessionLeaseName(sessionId)))
    await new Promise((resolve) => setTimeout(resolve, 10));
}

const targets: Array<{ name: string; databaseUrl?: () => string }> = [
  { name: "sqlite" },
  { name: "postgres", databaseUrl: () => testDatabaseUrl() },
];

describe.each(targets)("a cached agent after another server drove its session ($name)", (target) => {
  let home: string;
  let workspace: string;
  let config: Config;
  const stores: Store[] = [];
  const runners: SessionRunner[] = [];
  const opened: Array<{ owner: string; agent: Agent }> = [];

  const runner = async (owner: string) => {
    const store = await openStore({
      home,
      ...(target.databaseUrl ? { databaseUrl: target.databaseUrl() } : {}),
    });
    stores.push(store);
    const made = new SessionRunner({
      store,
      owner,
      open: async (sessionId) => {
        const { agent } = await openTestAgent({
          store,
          config,
          workspace,
          home,
          sessionId,
          owner,
          approval: "never",
          leaseTtlMs: 5_000,
        });
        opened.push({ owner, agent });
        return agent;
      },
      sweepIntervalMs: 60_000,
      maxSessions: 10,
      maxRunning: 10,
      leaseTtlMs: 5_000,
      shutdownGraceMs: 0,
    });
    runners.push(made);
    return { store, runner: made };
  };

  beforeAll(() => {
    ({ home, workspace } = tmpHome(`bdsh-stale-${target.name}-`));
    config = testConfig(fake.url);
  });
  afterAll(async () => {
    for (const r of runners) await r.stop();
    for (const s of stores) await s.close();
  });

  it("is rebuilt from the log: turn 3 on A does not act on a file read A saw before B's turn 2", async () => {
    const a = await runner(`stale-a-${target.name}`);
    const b = await runner(`stale-b-${target.name}`);
    const file = join(workspace, "notes.txt");
    writeFileSync(file, "alpha\n");
    const marker = scenario(`stale-${target.name}`, (_request, messages) => {
      const users = messages.filter((m) => m.role === "user").map((m) => String(m.content));
      const turn = users.filter((u) => u.includes("TURN")).length;
      const answered = toolResults(messages).length;
      if (turn === 1 && answered === 0)
        return { toolCalls: [{ id: "read1", name: "read", arguments: { file_path: file } }] };
      if (turn === 3 && answered === 1)
        return {
          toolCalls: [
            {
              id: "edit3",
              name: "edit",
              arguments: { file_path: file, old_string: "alpha", new_string: "omega" },
            },
          ],
        };
      return { text: `done with turn ${turn}` };
    });
    const session = await a.store.createSession({ metadata: { workspace } });
    const turn = async (side: { store: Store; runner: SessionRunner }, n: number) => {
      await leaseFree(side.store, session.id);
      const before = (await side.store.getSession(session.id))!.lastSeq;
      await side.store.enqueueInbox(session.id, {
        queue: "next-turn",
        mode: "followup",
        source: "human",
        text: `${marker} TURN ${n}`,
      });
      await side.runner.sweep();
      return waitForEvent(
        side.store,
        session.id,
        (e) => e.type === "agent/status" && e.data.status === "idle",
        before,
      );
    };

    await turn(a, 1);
    await turn(b, 2);
    await turn(a, 3);

    const events = await a.store.read(session.id);
    const results = events.filter((e): e is LogEvent<"tool/result"> => e.type === "tool/result");
    expect(results.map((r) => [r.data.callId, r.data.isError === true])).toEqual([
      ["read1", false],
      ["edit3", true],
    ]);
    expect(results[1]!.data.text).toContain("has not been read");
    expect(readFileSync(file, "utf8")).toBe("alpha\n");
    // A opened a second agent for turn 3 (its first was from before turn 2); B opened one.
    expect(opened.map((o) => o.owner)).toEqual([a.runner.owner, b.runner.owner, a.runner.owner]);
    const ends = events.filter((e): e is LogEvent<"turn/end"> => e.type === "turn/end");
    expect(ends.map((e) => e.data.reason)).toEqual(["completed", "completed", "completed"]);
  });

  it("gives a route a fresh agent, not the stale one (what the route sets there, a goal armed, must last)", async () => {
    const a = await runner(`route-a-${target.name}`);
    const b = await runner(`route-b-${target.name}`);
    const marker = scenario(`route-${target.name}`, () => ({ text: "fine" }));
    const session = await a.store.createSession({ metadata: { workspace } });
    for (const side of [a, b]) {
      await leaseFree(side.store, session.id);
      const seq = (await side.store.getSession(session.id))!.lastSeq;
      await side.store.enqueueInbox(session.id, {
        queue: "next-turn",
        mode: "followup",
        source: "human",
        text: `${marker} TURN`,
      });
      await side.runner.sweep();
      await waitForEvent(
        side.store,
        session.id,
        (e) => e.type === "agent/status" && e.data.status === "idle",
        seq,
      );
    }
    const stale = await a.runner.cachedAgent(session.id);
    const given = await a.runner.agent(session.id);
    expect(given).not.toBe(stale);
    expect(await a.runner.agent(session.id)).toBe(given);
    expect(given.log.seq).toBe(0); // opened, not yet driven: it reads the whole log when it drives
  });

  it("keeps a cached agent whose log nobody else moved", async () => {
    const a = await runner(`keep-a-${target.name}`);
    const marker = scenario(`keep-${target.name}`, () => ({ text: "fine" }));
    const session = await a.store.createSession({ metadata: { workspace } });
    const before = opened.length;
    for (const n of [1, 2]) {
      await leaseFree(a.store, session.id);
      const seq = (await a.store.getSession(session.id))!.lastSeq;
      await a.store.enqueueInbox(session.id, {
        queue: "next-turn",
        mode: "followup",
        source: "human",
        text: `${marker} TURN ${n}`,
      });
      await a.runner.sweep();
      await waitForEvent(
        a.store,
        session.id,
        (e) => e.type === "agent/status" && e.data.status === "idle",
        seq,
      );
    }
    expect(opened.length - before).toBe(1);
  });
});
