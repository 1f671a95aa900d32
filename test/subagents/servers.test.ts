/**
 * Subagents across real `bdsh serve` processes on one PostgreSQL database (a database of its own).
 *
 * - S3 across servers: with one driving slot per server, the parent's server is busy when its child is
 *   queued, so the other server drives the child. That server is then shut down gracefully while the child
 *   works: it finishes the child's turn (the settlement is written) but claims nothing new, so the
 *   settlement (an inbox row plus NOTIFY) can only wake the idle parent on the first server.
 * - R1 for children: the server is SIGKILLed while a child runs a tool; after a restart the child's turn is
 *   closed (`interrupted`, the call's outcome unknown, never re-run), the child settles INTERRUPTED, and the
 *   parent is told.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";
import { childView } from "../../src/subagents/ledger.js";
import { type FakeProvider, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { post, type ServeProcess, startServe } from "../chaos/serve-process.js";
import { type FreshDatabase, freshPostgresDatabase } from "../support/fresh-database.js";
import { delay, lastToolMessage, toolResultsSinceLastUser, userText } from "./support.js";

const LEASE_TTL_MS = 1_500;

let database: FreshDatabase;
let databaseUrl: string;
let dir: string;
let store: Store;
let fake: FakeProvider | undefined;
const servers: ServeProcess[] = [];

beforeAll(async () => {
  database = await freshPostgresDatabase("subagents");
  databaseUrl = database.url;
  dir = mkdtempSync(join(tmpdir(), "bdsh-sa-servers-"));
  mkdirSync(join(dir, "ws"));
  mkdirSync(join(dir, "home"));
  store = await openStore({ home: join(dir, "home"), databaseUrl });
});

afterEach(async () => {
  for (const s of servers) s.child.kill("SIGKILL");
  await Promise.all(servers.map((s) => s.exited));
  servers.length = 0;
  await fake?.close();
  fake = undefined;
});

afterAll(async () => {
  await store?.close();
  await database?.drop();
});

function serveEnv(maxRunning: number, graceMs = 0) {
  const configFile = join(dir, `config-${maxRunning}-${graceMs}.yaml`);
  writeFileSync(
    configFile,
    [
      "server:",
      `  lease_ttl_ms: ${LEASE_TTL_MS}`,
      "  sweep_interval_ms: 500",
      `  shutdown_grace_ms: ${graceMs}`,
      `  max_running_per_server: ${maxRunning}`,
      "session:",
      "  titles: false",
      "continuation:",
      "  announced_action: false",
      "  open_todos: false",
      "",
    ].join("\n"),
  );
  return { databaseUrl, fakeUrl: fake!.url, home: join(dir, "home"), workspace: join(dir, "ws"), configFile };
}

/** The pid of the server whose lease drives `sessionId` now. */
async function driverPid(sessionId: string): Promise<string | undefined> {
  const lease = await store.getLease(sessionLeaseName(sessionId));
  return lease?.owner.split(":")[1];
}

async function waitFor(sessionId: string, match: (e: LogEvent) => boolean, after = 0): Promise<LogEvent> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  try {
    for await (const event of store.follow(sessionId, { after, signal: controller.signal }))
      if (match(event)) return event;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  throw new Error(`no matching event in ${sessionId} within 30 s`);
}

const childIdOf = (events: readonly LogEvent[]) => {
  const started = events.find((e) => e.type === "subagent/started");
  return started?.type === "subagent/started" ? started.data.childId : undefined;
};

describe("subagents across servers (S3, R1)", () => {
  it("a child driven by one server wakes its parent on the other", async () => {
    const seen: { childDriver?: string; parentDriver?: string; wakeDriver?: string } = {};
    let parentId = "";
    fake = await startFakeProvider({
      script: async (request: FakeRequest) => {
        const text = userText(request);
        if (text.includes("CROSS CHILD")) {
          const childId = childIdOf(await store.read(parentId))!;
          seen.childDriver = await driverPid(childId);
          // The child's server finishes this turn and claims nothing more (graceful shutdown).
          servers.find((s) => String(s.child.pid) === seen.childDriver)?.child.kill("SIGTERM");
          await delay(1_000); // the parent's turn has ended by now: its server is free again
          return { text: "child answer" };
        }
        if (text.includes("Background subagent")) {
          seen.wakeDriver = await driverPid(parentId);
          return { text: "parent saw it" };
        }
        if (toolResultsSinceLastUser(request) === 0) {
          seen.parentDriver = await driverPid(parentId);
          return { toolCalls: [{ id: "x", name: "subagent", arguments: { task: "CROSS CHILD: answer" } }] };
        }
        await delay(500); // keep the parent's server busy while the other claims the child
        return { text: "waiting" };
      },
    });
    const env = serveEnv(1, 20_000);
    servers.push(await startServe(env), await startServe(env));
    const session = await post(`${servers[0]!.url}/v1/sessions`, { title: "cross" });
    parentId = String(session.id);
    await post(`${servers[0]!.url}/v1/sessions/${parentId}/messages`, { text: "delegate" });
    const notice = await waitFor(
      parentId,
      (e) => e.type === "user/message" && e.data.source === "subagent-settled",
    );
    await waitFor(parentId, (e) => e.type === "turn/end", notice.seq);
    const pids = servers.map((s) => String(s.child.pid));
    expect(pids).toContain(seen.childDriver);
    expect(pids).toContain(seen.wakeDriver);
    expect(seen.parentDriver).not.toBe(seen.childDriver);
    expect(seen.wakeDriver).not.toBe(seen.childDriver); // woken on the other server
    expect(notice.type === "user/message" && notice.data.text).toContain("child answer");
    // The child's server shut down cleanly after finishing the child's turn.
    const stopped = servers.find((s) => String(s.child.pid) === seen.childDriver)!;
    expect(await stopped.exited).toBe(0);
  });

  it("a child whose server died is repaired after a restart, settles INTERRUPTED, the parent is told, nothing runs twice", async () => {
    const effects = join(dir, "ws", "child-effects.log");
    writeFileSync(effects, "");
    fake = await startFakeProvider({
      script: (request: FakeRequest) => {
        const text = userText(request);
        if (text.includes("DOOMED CHILD")) {
          if (toolResultsSinceLastUser(request) === 0)
            return {
              toolCalls: [
                {
                  id: "slow",
                  name: "bash",
                  arguments: { command: `echo ran >> ${effects} && sleep 60`, description: "slow work" },
                },
              ],
            };
          return { text: "should not be asked" };
        }
        if (text.includes("Background subagent")) return { text: "parent heard" };
        if (toolResultsSinceLastUser(request) === 0)
          return { toolCalls: [{ id: "d", name: "subagent", arguments: { task: "DOOMED CHILD: work" } }] };
        return { text: `waiting (${lastToolMessage(request).slice(0, 16)})` };
      },
    });
    const env = serveEnv(4);
    servers.push(await startServe(env));
    const session = await post(`${servers[0]!.url}/v1/sessions`, { title: "crash" });
    const parentId = String(session.id);
    await post(`${servers[0]!.url}/v1/sessions/${parentId}/messages`, { text: "delegate" });
    await waitFor(parentId, (e) => e.type === "turn/end");
    const childId = childIdOf(await store.read(parentId))!;
    await waitFor(childId, (e) => e.type === "tool/call" && e.data.callId === "slow");
    // The command has started (its effect is written first), then the server dies.
    for (let i = 0; i < 200 && !readFileSync(effects, "utf8").includes("ran"); i++) await delay(50);
    servers[0]!.child.kill("SIGKILL");
    await servers[0]!.exited;
    expect((await childView(store, childId))?.state).toBe("RUNNING");

    servers.push(await startServe(env));
    const notice = await waitFor(
      parentId,
      (e) => e.type === "user/message" && e.data.source === "subagent-settled",
    );
    expect(notice.type === "user/message" && notice.data.text).toMatch(
      new RegExp(`^Background subagent ${childId} was interrupted before it finished`),
    );
    await waitFor(parentId, (e) => e.type === "turn/end", notice.seq);
    expect((await childView(store, childId))?.state).toBe("INTERRUPTED");
    const childEvents = await store.read(childId);
    expect(childEvents.find((e) => e.type === "tool/result")?.data).toMatchObject({
      callId: "slow",
      code: "TOOL_OUTCOME_UNKNOWN",
    });
    expect(childEvents.filter((e) => e.type === "turn/start")).toHaveLength(1); // never re-run
    expect(readFileSync(effects, "utf8")).toBe("ran\n");
  });
});
