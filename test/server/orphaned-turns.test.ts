/**
 * Issue 16 item 1, orphaned turns (R1, L9, P3): two real `bdsh serve` processes on one PostgreSQL database
 * (a database of its own: every server repairs any orphan it sees, so other files' sessions stay out of
 * reach). A session's first step creates a goal (armed, as a `goal/armed` event), its second runs a
 * slow `bash` call; once that call is recorded as started, the server driving it is SIGKILLed. With no
 * message sent after, the other server must close the turn honestly: a synthetic "outcome unknown" result for
 * the call, the step and the turn closed (`interrupted`), the session idle — by the lapse of the dead
 * server's lease, not by a sweep (the sweep interval here is far longer than the test may run). And it must
 * start nothing: no model request, no new turn, no goal round (the repair disarms the goal, as a `goal/armed` event). How
 * soon after the kill the turn closes is printed, not asserted: tests check behaviour, benchmarks speed.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { post, type ServeProcess, startServe, writeServeConfig } from "../chaos/serve-process.js";
import { type FreshDatabase, freshPostgresDatabase } from "../support/fresh-database.js";

const LEASE_TTL_MS = 1_500;
/** Longer than the test may run: only the lease's lapse can start the repair. */
const SWEEP_INTERVAL_MS = 3_600_000;

let database: FreshDatabase;
let databaseUrl: string;
let dir: string;
let fake: FakeProvider;
let store: Store;
const servers: ServeProcess[] = [];

const messagesOf = (body: unknown) =>
  ((body as { messages?: Array<{ role: string }> } | undefined)?.messages ?? []) as Array<{
    role: string;
    content?: unknown;
  }>;

beforeAll(async () => {
  database = await freshPostgresDatabase("orphan");
  databaseUrl = database.url;
  dir = mkdtempSync(join(tmpdir(), "bdsh-orphan-"));
  mkdirSync(join(dir, "ws"));
  mkdirSync(join(dir, "home"));
  fake = await startFakeProvider({
    script: (request) => {
      const tools = messagesOf(request.body).filter((m) => m.role === "tool").length;
      if (tools === 0)
        return {
          toolCalls: [{ id: "goal1", name: "create_goal", arguments: { objective: "finish the slow job" } }],
        };
      if (tools === 1)
        return {
          toolCalls: [
            {
              id: "slow1",
              name: "bash",
              arguments: { command: "sleep 30 && echo finished", description: "a slow job" },
            },
          ],
        };
      return { text: "should never be asked" };
    },
  });
  store = await openStore({ home: join(dir, "home"), databaseUrl });
});

afterAll(async () => {
  for (const s of servers) s.child.kill("SIGKILL");
  await Promise.all(servers.map((s) => s.exited));
  await store?.close();
  await fake?.close();
  await database?.drop();
});

/** The first event after `after` that matches, from the store's own follow. */
async function waitFor(sessionId: string, match: (e: LogEvent) => boolean, after = 0): Promise<LogEvent> {
  const controller = new AbortController();
  try {
    for await (const event of store.follow(sessionId, { after, signal: controller.signal }))
      if (match(event)) return event;
  } finally {
    controller.abort();
  }
  throw new Error("follow ended");
}

describe("a turn whose server died (issue 16 item 1)", () => {
  it("is closed by the other server once its lease lapses, with no new message, and nothing starts", async () => {
    const configFile = join(dir, "config.yaml");
    writeServeConfig(configFile, {
      lease_ttl_ms: LEASE_TTL_MS,
      sweep_interval_ms: SWEEP_INTERVAL_MS,
      shutdown_grace_ms: 0,
    });
    const env = {
      databaseUrl,
      fakeUrl: fake.url,
      home: join(dir, "home"),
      workspace: join(dir, "ws"),
      configFile,
    };
    servers.push(...(await Promise.all([startServe(env), startServe(env)])));
    const session = await post(`${servers[0]!.url}/v1/sessions`, { title: "orphan" });
    const id = String(session.id);
    await post(`${servers[0]!.url}/v1/sessions/${id}/messages`, { text: "run the slow job" });

    const started = await waitFor(id, (e) => e.type === "tool/call" && e.data.callId === "slow1");
    // The owner is `<host>:<pid>:<random>` (serve's defaultOwner): the lease names the driving process.
    const lease = await store.getLease(sessionLeaseName(id));
    const driver = servers.find((s) => lease?.owner.split(":")[1] === String(s.child.pid));
    const survivor = servers.find((s) => s !== driver);
    expect(driver).toBeDefined();
    expect(survivor).toBeDefined();
    const requestsBefore = fake.requests.length;

    const killedAt = Date.now();
    driver!.child.kill("SIGKILL");
    await driver!.exited;
    const end = await waitFor(id, (e) => e.type === "turn/end", started.seq);
    console.info(
      `orphaned turn closed ${Date.now() - killedAt} ms after the kill (lease ${LEASE_TTL_MS} ms)`,
    );
    expect(end.data).toMatchObject({ reason: "interrupted" });

    const idle = await waitFor(id, (e) => e.type === "agent/status", end.seq);
    expect(idle.data).toEqual({ status: "idle" });
    // Long enough for a new turn or a goal round to have begun, were one going to.
    await new Promise((resolve) => setTimeout(resolve, 2 * LEASE_TTL_MS));
    const events = await store.read(id);
    const tail = events.filter((e) => e.seq > started.seq).map((e) => [e.type, e.data]);
    expect(tail).toEqual([
      [
        "tool/result",
        expect.objectContaining({
          callId: "slow1",
          code: "TOOL_OUTCOME_UNKNOWN",
          isError: true,
          synthetic: true,
        }),
      ],
      ["step/end", { result: "error" }],
      ["turn/end", expect.objectContaining({ reason: "interrupted" })],
      // R2: the repair disarms the goal the dead server had armed, and says so in the log.
      ["goal/armed", { armed: false, reason: "crash-repair" }],
      ["agent/status", { status: "idle" }],
    ]);
    expect(events.filter((e) => e.type === "turn/start")).toHaveLength(1);
    expect(fake.requests.length).toBe(requestsBefore);
    expect(await store.pendingInbox(id)).toEqual([]);
    expect(await store.getLease(sessionLeaseName(id))).toBeUndefined();
    const goal = await store.planning.getGoal(id);
    expect(goal).toMatchObject({ phase: "active", roundsStarted: 0 });
    expect(survivor!.child.exitCode).toBeNull();
  });
});
