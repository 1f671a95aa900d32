/**
 * The Hermes subagent lifecycle API over HTTP (issue 17 item 5), through `bdshPlugin` on a real Fastify
 * server with SQLite and the scripted provider: a plugin's tool launches a child during the parent's turn
 * (driven by the server's runner, S1), and the client holds only the handle.
 *
 * - `POST /v1/subagents/{status|wait|cancel|result|reconnect}` answer what SubagentLifecycle answers, as
 *   200s: RUNNING → SUCCEEDED, `wait` timing out with `{timedOut: true}` and later `{timedOut: false}`, the
 *   result with its SHA-256, reconnect; a forged or malformed handle is `200 {state: "UNKNOWN", code:
 *   "UNKNOWN_HANDLE"}` from every route;
 * - cancel is cooperative: CANCEL_REQUESTED, then CANCELLED once the child settled (S3), never before;
 * - `GET /v1/sessions/:id/agents` lists the children with their states; 404 for an unknown session;
 * - the bearer token as on every /v1 route; 400 for a body the API cannot read; the OpenAPI document lists
 *   the routes;
 * - two servers on one PostgreSQL database (a database of its own): a handle issued through one is verified
 *   and answered by the other (the key is in the store), and a cancel sent to either reaches the child
 *   wherever it is driven.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Plugin } from "../../src/loop/plugin.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { SubagentHandle } from "../../src/subagents/handles.js";
import type { LaunchRequest } from "../../src/subagents/service.js";
import type { ToolDefinition } from "../../src/tools/types.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import {
  api,
  type Message,
  type Scenario,
  startScenarioProvider,
  startServer,
  type TestServer,
  testConfig,
  tmpHome,
  toolResults,
} from "../server/harness.js";
import { type FreshDatabase, freshPostgresDatabase } from "../support/fresh-database.js";
import { guard } from "../support/wait.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const UNKNOWN = { state: "UNKNOWN", code: "UNKNOWN_HANDLE" };
const ROUTES = ["status", "wait", "cancel", "result", "reconnect"] as const;

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** What the plugin's tool launched, by the tool call's id. */
const handles = new Map<string, SubagentHandle>();
const gates: Array<{ open: () => void }> = [];
/** Launch calls (by call id) whose tool waits for this before it answers. */
const holdAfterLaunch = new Map<string, Promise<void>>();

/** A host's plugin: `launch_child` launches through the lifecycle API during a turn. */
const lifecyclePlugin: Plugin = {
  name: "lifecycle-http-test",
  setup(ctx) {
    const launchTool: ToolDefinition<{ request: Record<string, unknown> }> = {
      name: "launch_child",
      toolset: "lifecycle-test",
      description: "Launch a child through the lifecycle API.",
      parameters: {
        type: "object",
        properties: { request: { type: "object", description: "The launch request." } },
        required: ["request"],
        additionalProperties: false,
      },
      async execute(args, exec) {
        const handle = await exec.services.require("subagents").launch(args.request as LaunchRequest);
        handles.set(exec.callId, handle);
        await holdAfterLaunch.get(exec.callId); // the parent's turn stays open until the test lets it go
        return { text: JSON.stringify(handle) };
      },
    };
    ctx.tools.register(launchTool);
  },
};

let store: Store;
let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;
let server: TestServer;

/** Live store subscriptions that watch events (only a lifecycle `wait` opens those), through `counted`. */
let eventWatchers = 0;

/** The store as the server sees it, counting its event subscriptions. */
function counting(inner: Store): Store {
  return new Proxy(inner, {
    get(target, property) {
      if (property === "subscribe")
        return (listener: Parameters<Store["subscribe"]>[0], options?: Parameters<Store["subscribe"]>[1]) => {
          const stop = target.subscribe(listener, options);
          if (!options?.events) return stop;
          eventWatchers++;
          let stopped = false;
          return () => {
            if (!stopped) eventWatchers--;
            stopped = true;
            stop();
          };
        };
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

beforeAll(async () => {
  const { home, workspace } = tmpHome("bdsh-sa-http-");
  store = await openStore({ home });
  ({ fake, scenario } = await startScenarioProvider());
  server = await startServer({
    store: counting(store),
    config: { ...testConfig(fake.url), approval: "never" },
    home,
    workspace,
    plugins: [lifecyclePlugin],
  });
});

afterAll(async () => {
  for (const g of gates) g.open();
  await server?.app.close();
  await fake?.close();
  await store?.close();
});

const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = server.auth) =>
  api(server.url, method, path, body, headers);

/** A parent whose first step launches one child with `request`; it answers anything later with text. */
function parentLaunching(name: string, callId: string, request: Record<string, unknown>): string {
  return scenario(name, (_request, messages: Message[]) => {
    if (messages.at(-1)?.role === "tool") return { text: "launched" };
    if (toolResults(messages).length > 0) return { text: "noted" };
    return { toolCalls: [{ id: callId, name: "launch_child", arguments: { request } }] };
  });
}

/** A child that answers `text` once `held` resolves. */
function heldChild(
  name: string,
  text: string,
): { marker: string; release: () => void; asked: () => boolean } {
  const held = gate();
  gates.push(held);
  let asked = false;
  const marker = scenario(name, async () => {
    asked = true;
    await held.promise;
    return { reasoning: "HIDDEN-REASONING of the child", text };
  });
  return { marker, release: held.open, asked: () => asked };
}

async function launch(
  name: string,
  request: Record<string, unknown>,
): Promise<{ parentId: string; handle: SubagentHandle }> {
  const callId = `launch-${name}`;
  const created = await call("POST", "/v1/sessions", {
    text: `${parentLaunching(name, callId, request)} go`,
  });
  expect(created.status).toBe(201);
  await vi.waitFor(() => expect(handles.get(callId)).toBeDefined(), { timeout: guard(20_000) });
  return { parentId: String(created.body.id), handle: handles.get(callId)! };
}

const post = (route: (typeof ROUTES)[number], body: Record<string, unknown>) =>
  call("POST", `/v1/subagents/${route}`, body);

describe("the subagent lifecycle API over HTTP", () => {
  it("status, wait, result and reconnect by handle; the parent's agents; forged handles are UNKNOWN_HANDLE", async () => {
    const child = heldChild("http-child-slow", "the answer over HTTP");
    const { parentId, handle } = await launch("http-launch-slow", {
      goal: `${child.marker} look into it`,
      correlationId: "http-42",
    });
    expect(handle).toMatchObject({ version: 1, parentId, correlationId: "http-42" });
    const first = await post("status", { handle });
    expect(first.status).toBe(200);
    expect(["PENDING", "STARTING", "RUNNING"]).toContain(first.body.state);

    await vi.waitFor(() => expect(child.asked()).toBe(true), { timeout: guard(20_000) });
    await vi.waitFor(async () => expect((await post("status", { handle })).body.state).toBe("RUNNING"), {
      timeout: guard(20_000),
    });
    expect(await post("status", { handle })).toEqual({
      status: 200,
      body: { state: "RUNNING", correlationId: "http-42" },
    });
    expect(await post("wait", { handle, timeout_ms: 30 })).toEqual({
      status: 200,
      body: { state: "RUNNING", timedOut: true },
    });
    expect(await post("result", { handle })).toEqual({
      status: 200,
      body: { state: "RUNNING", code: "NOT_FINISHED" },
    });
    const running = await call("GET", `/v1/sessions/${parentId}/agents`);
    expect(running).toEqual({
      status: 200,
      body: {
        agents: [
          {
            id: handle.childId,
            kind: "subagent",
            mode: "spawn",
            state: "RUNNING",
            active: true,
            task: `${child.marker} look into it`,
            correlationId: "http-42",
          },
        ],
      },
    });

    child.release();
    expect(await post("wait", { handle, timeout_ms: 60_000 })).toEqual({
      status: 200,
      body: { state: "SUCCEEDED", timedOut: false },
    });
    const result = await post("result", { handle });
    expect(result).toEqual({
      status: 200,
      body: {
        state: "SUCCEEDED",
        text: "the answer over HTTP",
        hash: sha256("the answer over HTTP"),
        truncated: false,
        reason: "completed",
        settledAt: expect.any(String),
      },
    });
    expect(JSON.stringify(result.body)).not.toContain("HIDDEN-REASONING");
    expect(await post("result", { handle: JSON.parse(JSON.stringify(handle)) })).toEqual(result);
    expect(await post("reconnect", { handle })).toEqual({
      status: 200,
      body: { state: "SUCCEEDED", handle },
    });
    expect(await post("cancel", { handle })).toEqual({ status: 200, body: { state: "SUCCEEDED" } });
    const settled = await call("GET", `/v1/sessions/${parentId}/agents`);
    expect(settled.body.agents).toEqual([
      expect.objectContaining({
        id: handle.childId,
        state: "SUCCEEDED",
        active: false,
        settledAt: expect.any(String),
      }),
    ]);
    // A child's own list is empty; an unknown session is a 404.
    expect(await call("GET", `/v1/sessions/${handle.childId}/agents`)).toEqual({
      status: 200,
      body: { agents: [] },
    });
    expect(await call("GET", "/v1/sessions/no-such-session/agents")).toMatchObject({
      status: 404,
      body: { error: { code: "NOT_FOUND" } },
    });

    // Forged and malformed handles: the same 200 answer from every route, whatever is wrong.
    const cap = handle.capability;
    const forged: unknown[] = [
      { ...handle, capability: `${cap.slice(0, 10)}${cap[10] === "A" ? "B" : "A"}${cap.slice(11)}` },
      { ...handle, capability: cap.slice(0, -1) },
      { ...handle, version: 2 },
      { ...handle, correlationId: "http-43" },
      { ...handle, childId: parentId, parentId: handle.childId },
      { ...handle, extra: true },
      { version: 1, childId: handle.childId, parentId, capability: cap },
      JSON.stringify(handle),
      "junk",
      null,
      42,
      [handle],
    ];
    for (const bad of forged) {
      for (const route of ROUTES) {
        expect(
          await post(route, route === "wait" ? { handle: bad, timeout_ms: 0 } : { handle: bad }),
          route,
        ).toEqual({
          status: 200,
          body: UNKNOWN,
        });
      }
    }
    // The refused cancel requests changed nothing.
    expect((await post("result", { handle })).body).toEqual(result.body);
  });

  it("cancel over HTTP: CANCEL_REQUESTED, then CANCELLED once the child settled", async () => {
    const child = heldChild("http-child-cancel", "never sent");
    const { handle } = await launch("http-launch-cancel", { goal: `${child.marker} a long task` });
    await vi.waitFor(() => expect(child.asked()).toBe(true), { timeout: guard(20_000) });
    await vi.waitFor(async () => expect((await post("status", { handle })).body.state).toBe("RUNNING"), {
      timeout: guard(20_000),
    });
    expect(await post("cancel", { handle, reason: "not needed" })).toEqual({
      status: 200,
      body: { state: "CANCEL_REQUESTED" },
    });
    // Until the child's settlement is in its log, the answer is never CANCELLED.
    // (the log is read after the answer: a CANCELLED answer had a settlement behind it).
    const seen = (await post("status", { handle })).body.state;
    const settledThen = await store.read(handle.childId, { types: ["subagent/settled"] });
    if (seen === "CANCELLED") expect(settledThen).toHaveLength(1);
    else expect(seen).toBe("CANCEL_REQUESTED");

    expect(await post("wait", { handle, timeout_ms: 60_000 })).toEqual({
      status: 200,
      body: { state: "CANCELLED", timedOut: false },
    });
    const settled = await store.read(handle.childId, { types: ["subagent/settled"] });
    expect(settled.map((e) => (e.type === "subagent/settled" ? e.data.reason : ""))).toEqual(["aborted"]);
    expect(await post("result", { handle })).toMatchObject({
      status: 200,
      body: { state: "CANCELLED", reason: "aborted", text: "", hash: sha256("") },
    });
    expect(await post("cancel", { handle })).toEqual({ status: 200, body: { state: "CANCELLED" } });
  });

  it("a failed child's result over HTTP carries its diagnostic", async () => {
    const marker = scenario("http-child-fails", () => ({
      status: 400,
      body: { error: { message: "refused" } },
    }));
    const { handle } = await launch("http-launch-fails", { goal: `${marker} try` });
    expect(await post("wait", { handle, timeout_ms: 60_000 })).toEqual({
      status: 200,
      body: { state: "FAILED", timedOut: false },
    });
    const result = await post("result", { handle });
    expect(result.body).toMatchObject({
      state: "FAILED",
      reason: "error",
      text: "",
      diagnostic: expect.any(String),
    });
    expect(String(result.body.diagnostic)).toMatch(/^[A-Z_]+: /);
  });

  it("a wait whose client went away stops waiting (its store subscription closed)", async () => {
    const child = heldChild("http-child-abandoned", "later");
    const { handle } = await launch("http-launch-abandoned", { goal: `${child.marker} take your time` });
    await vi.waitFor(() => expect(child.asked()).toBe(true), { timeout: guard(20_000) });
    await vi.waitFor(async () => expect((await post("status", { handle })).body.state).toBe("RUNNING"), {
      timeout: guard(20_000),
    });
    const before = eventWatchers;
    const client = new AbortController();
    const waiting = fetch(`${server.url}/v1/subagents/wait`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/json" },
      body: JSON.stringify({ handle, timeout_ms: 60_000 }),
      signal: client.signal,
    }).catch(() => "aborted");
    await vi.waitFor(() => expect(eventWatchers).toBe(before + 1), { timeout: guard(20_000) });
    client.abort();
    expect(await waiting).toBe("aborted");
    // Well before the 60 s the wait asked for.
    await vi.waitFor(() => expect(eventWatchers).toBe(before), { timeout: guard(20_000) });
    child.release();
    expect(await post("wait", { handle, timeout_ms: 60_000 })).toEqual({
      status: 200,
      body: { state: "SUCCEEDED", timedOut: false },
    });
  });

  it("cancel of a child no server has claimed yet: its task is dropped, it never runs, CANCELLED", async () => {
    // One driving slot: while the parent's turn runs, the child waits unclaimed (PENDING).
    const { home, workspace } = tmpHome("bdsh-sa-http-one-");
    const ownStore = await openStore({ home });
    const one = await startServer({
      store: ownStore,
      config: { ...testConfig(fake.url, { max_running_per_server: 1 }), approval: "never" },
      home,
      workspace,
      plugins: [lifecyclePlugin],
    });
    const release = gate();
    gates.push(release);
    try {
      let asked = false;
      const marker = scenario("http-child-unclaimed", () => {
        asked = true;
        return { text: "should never run" };
      });
      const callId = "launch-http-unclaimed";
      holdAfterLaunch.set(callId, release.promise);
      const parent = parentLaunching("http-launch-unclaimed", callId, {
        goal: `${marker} not needed after all`,
      });
      const at = (path: string, body?: unknown) =>
        api(one.url, body === undefined ? "GET" : "POST", path, body, one.auth);
      const created = await at("/v1/sessions", { text: `${parent} go` });
      await vi.waitFor(() => expect(handles.get(callId)).toBeDefined(), { timeout: guard(20_000) });
      const handle = handles.get(callId)!;
      expect(await at("/v1/subagents/status", { handle })).toEqual({
        status: 200,
        body: { state: "PENDING" },
      });
      // Cooperative as always: the answer is the request, not the outcome.
      expect(await at("/v1/subagents/cancel", { handle })).toEqual({
        status: 200,
        body: { state: "CANCEL_REQUESTED" },
      });
      release.open();
      expect(await at("/v1/subagents/wait", { handle, timeout_ms: 0 })).toEqual({
        status: 200,
        body: { state: "CANCELLED", timedOut: false },
      });
      // The parent's turn ends and the slot is free: nothing is left for a server to claim and run.
      await vi.waitFor(
        async () =>
          expect(
            (await ownStore.read(String(created.body.id), { types: ["turn/end"] })).map((e) => e.data),
          ).toEqual([{ reason: "completed" }]),
        { timeout: guard(20_000) },
      );
      await one.app.close(); // a stopped runner claims nothing more; the child's inbox is empty anyway
      expect(await ownStore.pendingInbox(handle.childId)).toEqual([]);
      expect(await ownStore.read(handle.childId, { types: ["turn/start"] })).toEqual([]);
      expect(asked).toBe(false);
    } finally {
      release.open();
      await one.app.close();
      await ownStore.close();
    }
  });

  it("needs the token; refuses bodies it cannot read; caps wait; is in the OpenAPI document", async () => {
    const handle = { version: 1, childId: "c", parentId: "p", capability: "v1.x" };
    for (const route of ROUTES) {
      expect(await call("POST", `/v1/subagents/${route}`, { handle }, {})).toMatchObject({
        status: 401,
        body: { error: { code: "UNAUTHORIZED" } },
      });
      expect(await post(route, {})).toMatchObject({ status: 400, body: { error: { code: "BAD_REQUEST" } } });
      expect(await post(route, { handle, colour: "red" })).toMatchObject({
        status: 400,
        body: { error: { code: "BAD_REQUEST", message: 'body: unknown field "colour"' } },
      });
    }
    expect(await call("GET", "/v1/sessions/anything/agents", undefined, {})).toMatchObject({ status: 401 });
    expect(await post("wait", { handle, timeout_ms: -1 })).toMatchObject({ status: 400 });
    // A timeout above the cap is lowered to it (the answer for a forged handle does not wait at all).
    expect(await post("wait", { handle, timeout_ms: 10 ** 9 })).toEqual({ status: 200, body: UNKNOWN });
    expect((await call("GET", "/v1/subagents/status")).status).toBe(405);

    const doc = await call("GET", "/v1/openapi.json");
    const paths = doc.body.paths as Record<
      string,
      Record<string, { security?: unknown; requestBody?: unknown }>
    >;
    for (const route of ROUTES) {
      expect(paths[`/v1/subagents/${route}`]?.post?.security).toEqual([{ bearer: [] }]);
      expect(paths[`/v1/subagents/${route}`]?.post?.requestBody).toBeDefined();
    }
    expect(paths["/v1/sessions/{id}/agents"]?.get?.security).toEqual([{ bearer: [] }]);
  });
});

describe("the lifecycle API across two servers on one PostgreSQL database", () => {
  let database: FreshDatabase;
  let storeA: Store;
  let storeB: Store;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    database = await freshPostgresDatabase("sa_http");
    const { home, workspace } = tmpHome("bdsh-sa-http-pg-");
    storeA = await openStore({ home, databaseUrl: database.url });
    storeB = await openStore({ home, databaseUrl: database.url });
    const config = { ...testConfig(fake.url), approval: "never" as const };
    a = await startServer({ store: storeA, config, home, workspace, plugins: [lifecyclePlugin] });
    b = await startServer({ store: storeB, config, home, workspace, plugins: [lifecyclePlugin] });
  });

  afterAll(async () => {
    for (const g of gates) g.open();
    await a?.app.close();
    await b?.app.close();
    await storeA?.close();
    await storeB?.close();
    await database?.drop();
  });

  it("a handle from one server is answered by the other; a cancel through either reaches the child", async () => {
    const at = (server: TestServer, path: string, body?: unknown) =>
      api(server.url, body === undefined ? "GET" : "POST", path, body, server.auth);
    const done = heldChild("pg-child-done", "answered across servers");
    const held = heldChild("pg-child-held", "never sent");
    const callDone = "launch-pg-done";
    const callHeld = "launch-pg-held";
    const parent = scenario("pg-parent", (_request, messages: Message[]) => {
      if (messages.at(-1)?.role === "tool") return { text: "launched" };
      if (toolResults(messages).length > 0) return { text: "noted" };
      return {
        toolCalls: [
          { id: callDone, name: "launch_child", arguments: { request: { goal: `${done.marker} one` } } },
          { id: callHeld, name: "launch_child", arguments: { request: { goal: `${held.marker} two` } } },
        ],
      };
    });
    const created = await at(a, "/v1/sessions", { text: `${parent} go` });
    expect(created.status).toBe(201);
    await vi.waitFor(() => expect(handles.get(callHeld)).toBeDefined(), { timeout: guard(20_000) });
    const first = handles.get(callDone)!;
    const second = handles.get(callHeld)!;

    // Whichever server drives them, both servers verify the handles and answer the same.
    await vi.waitFor(() => expect(done.asked() && held.asked()).toBe(true), { timeout: guard(20_000) });
    for (const server of [a, b])
      await vi.waitFor(
        async () =>
          expect((await at(server, "/v1/subagents/status", { handle: second })).body.state).toBe("RUNNING"),
        { timeout: guard(20_000) },
      );
    done.release();
    expect(await at(b, "/v1/subagents/wait", { handle: first, timeout_ms: 60_000 })).toEqual({
      status: 200,
      body: { state: "SUCCEEDED", timedOut: false },
    });
    const result = await at(b, "/v1/subagents/result", { handle: first });
    expect(result.body).toMatchObject({ state: "SUCCEEDED", text: "answered across servers" });
    expect(await at(a, "/v1/subagents/result", { handle: first })).toEqual(result);
    expect(await at(b, "/v1/subagents/reconnect", { handle: first })).toEqual({
      status: 200,
      body: { state: "SUCCEEDED", handle: first },
    });
    expect(await at(b, "/v1/subagents/status", { handle: { ...first, childId: second.childId } })).toEqual({
      status: 200,
      body: UNKNOWN,
    });

    // A cancel through B reaches whichever server drives the child, through the store.
    expect(await at(b, "/v1/subagents/cancel", { handle: second })).toEqual({
      status: 200,
      body: { state: "CANCEL_REQUESTED" },
    });
    expect(await at(a, "/v1/subagents/wait", { handle: second, timeout_ms: 60_000 })).toEqual({
      status: 200,
      body: { state: "CANCELLED", timedOut: false },
    });
    expect((await at(a, "/v1/subagents/result", { handle: second })).body).toMatchObject({
      state: "CANCELLED",
      reason: "aborted",
    });
    const listed = await at(b, `/v1/sessions/${created.body.id}/agents`);
    expect(
      (listed.body.agents as Array<{ id: string; state: string }>).map(({ id, state }) => ({ id, state })),
    ).toEqual([
      { id: first.childId, state: "SUCCEEDED" },
      { id: second.childId, state: "CANCELLED" },
    ]);
  });
});
