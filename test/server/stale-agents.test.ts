/**
 * Cached agents after another server drove their session: two session runners (two servers' worth: each its
 * own store connection and owner) on one database, driven by hand (`sweep()`, never started), so which one
 * drives each turn is the test's choice. Runner A drives turn 1 and keeps its agent cached idle; runner B
 * drives turn 2; A's cached agent drives turn 3 as it is, because its plugins' state is folded from the log.
 *
 * The state that shows it: file observations (C18, `files/observed` events). A's turn 1 reads the file, B's
 * turn 2 edits it, A's turn 3 edits it again without reading: from A's memory alone the file changed since
 * its read (refused as stale); from the log, B's edit left exactly the version A now edits. And a goal armed
 * through A's cached agent outside a drive is in the log, where B finds it.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import type { Agent } from "../../src/loop/agent.js";
import { runGoalCommand } from "../../src/planning/goal-command.js";
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

  it("knows from the log what another server's turn did: turn 3 on A edits the file as B's turn 2 left it", async () => {
    const a = await runner(`stale-a-${target.name}`);
    const b = await runner(`stale-b-${target.name}`);
    const file = join(workspace, `notes-${target.name}.txt`);
    writeFileSync(file, "alpha\n");
    const edit = (id: string, from: string, to: string) => ({
      toolCalls: [{ id, name: "edit", arguments: { file_path: file, old_string: from, new_string: to } }],
    });
    const marker = scenario(`stale-${target.name}`, (_request, messages) => {
      const users = messages.filter((m) => m.role === "user").map((m) => String(m.content));
      const turn = users.filter((u) => u.includes("TURN")).length;
      const answered = toolResults(messages).length;
      if (turn === 1 && answered === 0)
        return { toolCalls: [{ id: "read1", name: "read", arguments: { file_path: file } }] };
      if (turn === 2 && answered === 1) return edit("edit2", "alpha", "beta");
      if (turn === 3 && answered === 2) return edit("edit3", "beta", "omega");
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
    // A's memory alone would hold turn 1's read of "alpha": the file changed since, so the edit would be
    // refused as stale. Folded from the log, A knows B's edit left the version it now edits.
    expect(results.map((r) => [r.data.callId, r.data.isError === true])).toEqual([
      ["read1", false],
      ["edit2", false],
      ["edit3", false],
    ]);
    expect(readFileSync(file, "utf8")).toBe("omega\n");
    expect(events.filter((e) => e.type === "files/observed").length).toBeGreaterThanOrEqual(3);
    // One agent per server: A's cached agent drove turn 3, no rebuild.
    expect(opened.map((o) => o.owner)).toEqual([a.runner.owner, b.runner.owner]);
    const ends = events.filter((e): e is LogEvent<"turn/end"> => e.type === "turn/end");
    expect(ends.map((e) => e.data.reason)).toEqual(["completed", "completed", "completed"]);
  });

  it("gives a route the cached agent, and what the route sets there (a goal armed) is in the log for B", async () => {
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
    await leaseFree(a.store, session.id);
    const cached = await a.runner.cachedAgent(session.id);
    const given = await a.runner.agent(session.id);
    expect(given).toBe(cached);
    const rounds = given.api("goalRounds")!;
    const message = await runGoalCommand(
      { kind: "create", objective: "keep going" },
      {
        goals: given.services.require("goalService"),
        queueRound: async () => undefined,
        commit: () => rounds.commit(),
        kick: () => undefined,
        idle: false,
      },
    );
    expect(message).toBe("Goal set: keep going");
    // Written through A's own log after it read B's turn: the append is at the store's last seq.
    const events = await a.store.read(session.id);
    expect(events.slice(-2).map((e) => [e.type, e.type === "goal/armed" ? e.data : undefined])).toEqual([
      ["goal/armed", { armed: true, reason: "create" }],
      ["goal/updated", undefined],
    ]);
    const other = await b.runner.agent(session.id);
    expect(other.services.require("goalService").armed).toBe(false); // B has not read it yet
    await other.exclusive(async () => undefined); // B reads the log up to date, as any drive does
    expect(other.services.require("goalService").armed).toBe(true);
  });

  it("keeps a cached agent whose log nobody else moved", async () => {
    // Alone on the store: the earlier tests' runners would claim the session's input as readily as A.
    for (const earlier of runners) await earlier.stop();
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
