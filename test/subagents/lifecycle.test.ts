/**
 * The Hermes subagent lifecycle API through a real agent (standard preset, SQLite, the scripted provider):
 * a plugin's tool launches children with `exec.services.require("subagents").launch({...})` during a turn.
 *
 * - launch → a serializable handle (JSON round trip); PENDING/STARTING/RUNNING → SUCCEEDED (S1: the child
 *   is a session driven in this process);
 * - `wait` with a timeout answers `{timedOut: true}` while the child works, `{timedOut: false, state}` after;
 * - `result`: immutable, the same on every call and from another process, SHA-256 of the text, at most
 *   32,000 characters, no reasoning; RESULT_EXPIRED past `subagents.result_retention_hours`;
 * - `cancel` is cooperative: CANCEL_REQUESTED at once and for as long as the child has not settled (even
 *   after its turn ended), CANCELLED only after its settlement (S3);
 * - `reconnect` from a second store handle on the same file (another process) answers the same state;
 * - fail-closed requests: no launch outside a turn ("No active parent session"), capped goal, context and
 *   metadata, refused keys (blockedTools, cwd, timeoutMs), unknown or broadening toolsets; a child launched
 *   with allowedToolsets is offered only those toolsets (its requests' `tools`), plus its report tool when
 *   it must report a structured result (S4).
 */
import { createHash } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Config, DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { Agent } from "../../src/loop/agent.js";
import type { Plugin } from "../../src/loop/plugin.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { SubagentHandle } from "../../src/subagents/handles.js";
import { type Delegation, delegationOf, MAX_RESULT_CHARS } from "../../src/subagents/ledger.js";
import { SubagentLifecycle } from "../../src/subagents/lifecycle.js";
import type { LaunchRequest, SubagentService } from "../../src/subagents/service.js";
import type { ToolDefinition } from "../../src/tools/types.js";
import {
  type FakeProvider,
  type FakeReply,
  type FakeRequest,
  startFakeProvider,
} from "../../testing/fake-provider/index.js";
import { guard } from "../support/wait.js";
import { messagesOf, openTestAgent, testConfig, textOf, userText } from "./support.js";

const RETENTION_MS = 3_600_000;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

type Launch = { handle: SubagentHandle; statusAtLaunch: string } | { code: string; message: string };

/** One test's world: the fake provider, the store, the agent, and what the plugin's tool saw. */
type World = {
  fake: FakeProvider;
  store: Store;
  home: string;
  agent: Agent;
  service: SubagentService;
  launches: Map<string, Launch>;
  /** Runs a parent turn whose first step calls `launch_child` once per entry (id → request). */
  turn(plan: Record<string, Record<string, unknown>>): Promise<void>;
  /** Answers of a child by a marker in its task. */
  children: Map<string, (request: FakeRequest) => FakeReply | Promise<FakeReply>>;
  /** Children (by a marker in their task) whose aborted turn waits for this before it settles. */
  holdSettle: Map<string, Promise<void>>;
};

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** What only a program can pass (the model's arguments are JSON): metadata with a cycle or a BigInt. */
function inProcess(request: Record<string, unknown>): LaunchRequest {
  if (request.goal === "[cyclic]") {
    const metadata: Record<string, unknown> = { name: "loop" };
    metadata.self = metadata;
    return { goal: "ok", metadata };
  }
  if (request.goal === "[bigint]") return { goal: "ok", metadata: { n: 10n } };
  return request as LaunchRequest;
}

/** The plugin a host would write: a tool that launches a child through the lifecycle API during a turn. */
function lifecyclePlugin(world: Pick<World, "launches" | "holdSettle">): Plugin {
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
      const service = exec.services.require("subagents");
      try {
        const handle = await service.launch(inProcess(args.request));
        const status = await service.status(handle);
        world.launches.set(exec.callId, { handle, statusAtLaunch: status.state });
        return { text: JSON.stringify(handle) };
      } catch (error) {
        const { code, message } = error as { code: string; message: string };
        world.launches.set(exec.callId, { code, message });
        return { text: `Error: ${message}`, isError: true };
      }
    },
  };
  // A registered toolset no agent is offered: naming it in allowedToolsets would broaden the child.
  const hiddenTool: ToolDefinition<Record<string, never>> = {
    name: "hidden_tool",
    toolset: "hidden-test",
    description: "Never offered.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    isAvailable: () => false,
    async execute() {
      return { text: "unreachable" };
    },
  };
  return {
    name: "lifecycle-test",
    async setup(ctx) {
      for (const tool of [launchTool, hiddenTool]) ctx.tools.register(tool);
      const task = delegationOf(await ctx.sessionRecord.read())?.task ?? "";
      for (const [marker, held] of world.holdSettle) {
        if (!task.includes(marker)) continue;
        ctx.hooks.onSerial(
          "agent/turn-end",
          async ({ reason }) => {
            if (reason === "aborted") await held;
          },
          { plugin: "lifecycle-test" },
        );
      }
    },
  };
}

async function openWorld(
  options: { config?: (base: Config) => Config; holdSettle?: Map<string, Promise<void>> } = {},
): Promise<World> {
  const children = new Map<string, (request: FakeRequest) => FakeReply | Promise<FakeReply>>();
  const plans = new Map<string, Record<string, Record<string, unknown>>>();
  const fake = await startFakeProvider({
    script: (request) => {
      const text = userText(request);
      if (text.includes("You are a delegated subagent")) {
        for (const [marker, answer] of children) if (text.includes(marker)) return answer(request);
        return { text: "child done" };
      }
      // The parent: the first step after a "PLAN:<name>" message launches; anything later is a reply.
      const messages = messagesOf(request);
      const at = messages.findLastIndex((m) => m.role === "user" && textOf(m).includes("PLAN:"));
      const plan = at >= 0 ? /PLAN:(\w+)/.exec(textOf(messages[at]!))?.[1] : undefined;
      const calls = plan ? plans.get(plan) : undefined;
      const answered = messages.slice(at + 1).some((m) => m.role === "assistant");
      if (!calls || answered) return { text: messages.at(-1)?.role === "tool" ? "launched" : "noted" };
      return {
        toolCalls: Object.entries(calls).map(([id, request]) => ({
          id,
          name: "launch_child",
          arguments: { request },
        })),
      };
    },
  });
  const home = mkdtempSync(join(tmpdir(), "bdsh-lc-"));
  const store = await openStore({ home });
  const base = testConfig(fake.url);
  const config = options.config ? options.config(base) : base;
  const launches = new Map<string, Launch>();
  const holdSettle = options.holdSettle ?? new Map<string, Promise<void>>();
  const { agent } = await openTestAgent(
    store,
    fake.url,
    { plugins: [lifecyclePlugin({ launches, holdSettle })] },
    config,
  );
  cleanups.push(
    () => fake.close(),
    () => store.close(),
  );
  cleanups.push(() => agent.close());
  const service = agent.services.require("subagents");
  let plansMade = 0;
  return {
    fake,
    store,
    home,
    agent,
    service,
    launches,
    children,
    holdSettle,
    async turn(plan) {
      const name = `p${++plansMade}`;
      plans.set(name, plan);
      await agent.followup(`PLAN:${name}`);
      await agent.whenIdle();
    },
  };
}

function launched(world: World, id: string): { handle: SubagentHandle; statusAtLaunch: string } {
  const launch = world.launches.get(id);
  if (!launch || !("handle" in launch))
    throw new Error(`launch ${id} was refused: ${JSON.stringify(launch)}`);
  return launch;
}

function refused(world: World, id: string): { code: string; message: string } {
  const launch = world.launches.get(id);
  if (!launch || "handle" in launch)
    throw new Error(`launch ${id} was not refused: ${JSON.stringify(launch)}`);
  return launch;
}

const childRequests = (fake: FakeProvider, marker: string) =>
  fake.requests.filter((r) => {
    const text = userText(r);
    return text.includes("You are a delegated subagent") && text.includes(marker);
  });

const toolNames = (request: FakeRequest): string[] =>
  ((request.body?.tools ?? []) as Array<{ function?: { name?: string }; name?: string }>).map(
    (t) => t.function?.name ?? t.name ?? "",
  );

/** Another process: its own connection to the same SQLite file, and a driver that can only ask. */
async function otherProcess(world: World): Promise<SubagentLifecycle> {
  const store = await openStore({ home: world.home });
  cleanups.push(() => store.close());
  return new SubagentLifecycle(
    store,
    { wake: () => undefined, cancel: (id) => store.requestCancel(id) },
    { resultRetentionMs: RETENTION_MS },
  );
}

describe("subagent lifecycle API (Hermes) through a real agent", () => {
  it("launch → handle; RUNNING → SUCCEEDED; wait times out, then succeeds; result; reconnect elsewhere", async () => {
    const slow = gate();
    const world = await openWorld();
    world.children.set("[slow]", async () => {
      await slow.promise;
      return { reasoning: "HIDDEN-REASONING never leaves the child", text: "the slow answer" };
    });
    world.children.set("[big]", () => ({ text: "x".repeat(MAX_RESULT_CHARS + 8_000) }));
    await world.turn({
      slow: {
        goal: "[slow] summarise the repository",
        context: "only the README",
        correlationId: "review-42",
        role: "leaf",
        metadata: { ticket: 42 },
      },
      big: { goal: "[big] write a long report" },
    });
    const { handle, statusAtLaunch } = launched(world, "slow");
    const { service } = world;
    // Serializable: what a plugin persists and reads back is the same handle.
    const stored = JSON.stringify(handle);
    expect(JSON.parse(stored)).toEqual(handle);
    expect(handle).toEqual({
      version: 1,
      childId: expect.any(String),
      parentId: world.agent.sessionId,
      correlationId: "review-42",
      capability: expect.stringMatching(/^v1\./),
    });
    expect(["PENDING", "STARTING", "RUNNING"]).toContain(statusAtLaunch);
    // S1: the child is a session with the parent's id, the request recorded in its delegation.
    const row = await world.store.getSession(handle.childId);
    expect(row?.parentId).toBe(world.agent.sessionId);
    expect(delegationOf(row)).toMatchObject({
      via: "api",
      correlationId: "review-42",
      metadata: { ticket: 42 },
      task: "[slow] summarise the repository\n\nContext:\nonly the README",
    });

    await vi.waitFor(() => expect(childRequests(world.fake, "[slow]")).toHaveLength(1), {
      timeout: guard(20_000),
    });
    await vi.waitFor(async () => expect((await service.status(handle)).state).toBe("RUNNING"), {
      timeout: guard(20_000),
    });
    expect(await service.status(JSON.parse(stored))).toEqual({
      state: "RUNNING",
      correlationId: "review-42",
    });
    expect(await service.wait(handle, { timeoutMs: 30 })).toEqual({ state: "RUNNING", timedOut: true });
    // A caller that stops listening ends its wait: answered as a timeout, with the state seen last.
    const stopped = new AbortController();
    const abandoned = service.wait(handle, { timeoutMs: 60_000, signal: stopped.signal });
    stopped.abort();
    expect(await abandoned).toEqual({ state: "RUNNING", timedOut: true });
    // A timeout that is not a number of milliseconds answers at once (it never waits without end).
    for (const timeoutMs of [Number.NaN, -5, "100" as unknown as number])
      expect(await service.wait(handle, { timeoutMs })).toEqual({ state: "RUNNING", timedOut: true });
    expect(await service.result(handle)).toEqual({ state: "RUNNING", code: "NOT_FINISHED" });

    // Another process reconnects from the stored text and sees the same state.
    const elsewhere = await otherProcess(world);
    expect(await elsewhere.reconnect(JSON.parse(stored))).toEqual({ state: "RUNNING", handle });
    expect(await elsewhere.status(JSON.parse(stored))).toEqual({
      state: "RUNNING",
      correlationId: "review-42",
    });

    slow.open();
    expect(await service.wait(handle, { timeoutMs: 60_000 })).toEqual({
      state: "SUCCEEDED",
      timedOut: false,
    });
    const result = await service.result(handle);
    expect(result).toEqual({
      state: "SUCCEEDED",
      text: "the slow answer",
      hash: sha256("the slow answer"),
      truncated: false,
      reason: "completed",
      settledAt: expect.any(String),
    });
    // No transcript, no reasoning.
    expect(JSON.stringify(result)).not.toContain("HIDDEN-REASONING");
    // Immutable and idempotent, here and in the other process.
    expect(await service.result(handle)).toEqual(result);
    expect(await elsewhere.result(JSON.parse(stored))).toEqual(result);
    expect(await elsewhere.wait(handle, { timeoutMs: 0 })).toEqual({ state: "SUCCEEDED", timedOut: false });
    expect(await elsewhere.reconnect(handle)).toEqual({ state: "SUCCEEDED", handle });
    // Cancelling a settled child changes nothing.
    expect(await service.cancel(handle)).toEqual({ state: "SUCCEEDED" });
    expect(await service.result(handle)).toEqual(result);

    // At most 32,000 characters; the hash is the hash of the text returned.
    const big = launched(world, "big").handle;
    expect(await service.wait(big, { timeoutMs: 60_000 })).toEqual({ state: "SUCCEEDED", timedOut: false });
    const bigResult = await service.result(big);
    expect(bigResult).toMatchObject({ state: "SUCCEEDED", truncated: true });
    const bigText = "text" in bigResult ? bigResult.text : "";
    expect(bigText).toBe("x".repeat(MAX_RESULT_CHARS));
    expect("hash" in bigResult ? bigResult.hash : "").toBe(sha256(bigText));
  });

  it("cancel is cooperative: CANCEL_REQUESTED until the child settles, then CANCELLED", async () => {
    const model = gate();
    const settle = gate();
    const world = await openWorld({ holdSettle: new Map([["[hold-settle]", settle.promise]]) });
    cleanups.push(() => {
      settle.open();
      model.open();
    });
    world.children.set("[hold-model]", async () => {
      await model.promise;
      return { text: "too late" };
    });
    await world.turn({ c: { goal: "[hold-model] [hold-settle] a long task" } });
    const { handle } = launched(world, "c");
    const { service, store } = world;
    await vi.waitFor(() => expect(childRequests(world.fake, "[hold-model]")).toHaveLength(1), {
      timeout: guard(20_000),
    });
    await vi.waitFor(async () => expect((await service.status(handle)).state).toBe("RUNNING"), {
      timeout: guard(20_000),
    });

    expect(await service.cancel(handle, { reason: "no longer needed" })).toEqual({
      state: "CANCEL_REQUESTED",
    });
    // The request is in the store at once, for every process.
    const elsewhere = await otherProcess(world);
    expect(await elsewhere.status(handle)).toEqual({ state: "CANCEL_REQUESTED" });
    expect(delegationOf(await store.getSession(handle.childId))?.cancelRequested?.reason).toBe(
      "no longer needed",
    );

    // The child's turn ends aborted, but it has not settled: still not CANCELLED.
    await vi.waitFor(
      async () =>
        expect((await store.read(handle.childId, { types: ["turn/end"] })).map((e) => e.data)).toEqual([
          { reason: "aborted" },
        ]),
      { timeout: guard(20_000) },
    );
    expect(await store.read(handle.childId, { types: ["subagent/settled"] })).toEqual([]);
    expect(await service.status(handle)).toEqual({ state: "CANCEL_REQUESTED" });
    expect(await service.wait(handle, { timeoutMs: 30 })).toEqual({
      state: "CANCEL_REQUESTED",
      timedOut: true,
    });
    expect(await service.result(handle)).toEqual({ state: "CANCEL_REQUESTED", code: "NOT_FINISHED" });
    // Asking again is the same request (the first reason stays).
    expect(await elsewhere.cancel(handle, { reason: "again" })).toEqual({ state: "CANCEL_REQUESTED" });
    expect(delegationOf(await store.getSession(handle.childId))?.cancelRequested?.reason).toBe(
      "no longer needed",
    );

    settle.open();
    expect(await service.wait(handle, { timeoutMs: 60_000 })).toEqual({
      state: "CANCELLED",
      timedOut: false,
    });
    const settled = await store.read(handle.childId, { types: ["subagent/settled"] });
    expect(settled.map((e) => (e.type === "subagent/settled" ? e.data.reason : ""))).toEqual(["aborted"]);
    expect(await service.result(handle)).toMatchObject({ state: "CANCELLED", reason: "aborted", text: "" });
    expect(await elsewhere.status(handle)).toEqual({ state: "CANCELLED" });
    expect(await service.cancel(handle)).toEqual({ state: "CANCELLED" });
  });

  it("a cancel asked by another process reaches the child driven here (through the store)", async () => {
    const model = gate();
    const world = await openWorld();
    cleanups.push(() => model.open());
    world.children.set("[held-elsewhere]", async () => {
      await model.promise;
      return { text: "too late" };
    });
    await world.turn({ c: { goal: "[held-elsewhere] a long task" } });
    const { handle } = launched(world, "c");
    await vi.waitFor(() => expect(childRequests(world.fake, "[held-elsewhere]")).toHaveLength(1), {
      timeout: guard(20_000),
    });
    await vi.waitFor(async () => expect((await world.service.status(handle)).state).toBe("RUNNING"), {
      timeout: guard(20_000),
    });
    // The other process has no agent of the child: its driver can only leave a request in the store.
    const elsewhere = await otherProcess(world);
    expect(await elsewhere.cancel(handle, { reason: "from elsewhere" })).toEqual({
      state: "CANCEL_REQUESTED",
    });
    expect(await elsewhere.wait(handle, { timeoutMs: 60_000 })).toEqual({
      state: "CANCELLED",
      timedOut: false,
    });
    expect(await world.service.result(handle)).toMatchObject({ state: "CANCELLED", reason: "aborted" });
  });

  it("fails closed: no launch outside a turn; capped sizes; refused keys; unknown or broadening toolsets", async () => {
    const world = await openWorld({
      config: (base) => ({
        ...base,
        subagents: {
          ...DEFAULT_CONFIG.subagents,
          max_goal_chars: 100,
          max_context_chars: 200,
          max_metadata_bytes: 64,
        },
      }),
    });
    // No turn is running: the API has no parent to launch from.
    await expect(world.service.launch({ goal: "anything" })).rejects.toMatchObject({
      code: "NO_ACTIVE_PARENT",
      message: "No active parent session",
    });
    await world.turn({
      goalBig: { goal: "g".repeat(101) },
      contextBig: { goal: "ok", context: "c".repeat(201) },
      metadataBig: { goal: "ok", metadata: { blob: "m".repeat(64) } },
      blockedTools: { goal: "ok", blockedTools: ["bash"] },
      cwd: { goal: "ok", cwd: "/tmp" },
      timeoutMs: { goal: "ok", timeoutMs: 1_000 },
      unknownKey: { goal: "ok", colour: "red" },
      emptyGoal: { goal: " " },
      unknownToolset: { goal: "ok", allowedToolsets: ["no-such-toolset"] },
      broadening: { goal: "ok", allowedToolsets: ["files", "hidden-test"] },
      cyclic: { goal: "[cyclic]" },
      bigint: { goal: "[bigint]" },
    });
    expect(refused(world, "goalBig")).toEqual({
      code: "TOO_LARGE",
      message: "goal is 101 characters; the limit is 100",
    });
    expect(refused(world, "contextBig")).toEqual({
      code: "TOO_LARGE",
      message: "context is 201 characters; the limit is 200",
    });
    expect(refused(world, "metadataBig")).toEqual({
      code: "TOO_LARGE",
      message: "metadata is 75 bytes as JSON; the limit is 64",
    });
    expect(refused(world, "blockedTools")).toEqual({
      code: "UNSUPPORTED",
      message: "blockedTools: per-tool blocks are not supported; narrow the child with allowedToolsets",
    });
    expect(refused(world, "cwd")).toEqual({
      code: "UNSUPPORTED",
      message: "cwd: a working-directory override is not supported; a child starts in its parent's directory",
    });
    expect(refused(world, "timeoutMs")).toEqual({
      code: "UNSUPPORTED",
      message: "timeoutMs: a per-launch timeout is not supported; cancel the child instead",
    });
    expect(refused(world, "unknownKey")).toEqual({
      code: "INVALID_REQUEST",
      message: 'unknown launch request key "colour"',
    });
    expect(refused(world, "emptyGoal")).toEqual({
      code: "INVALID_REQUEST",
      message: "goal must be a non-empty string",
    });
    expect(refused(world, "unknownToolset")).toEqual({
      code: "TOOLSET_NOT_ALLOWED",
      message:
        'toolset "no-such-toolset" is unknown or not offered to the parent; a child can only be narrowed',
    });
    expect(refused(world, "broadening")).toEqual({
      code: "TOOLSET_NOT_ALLOWED",
      message: 'toolset "hidden-test" is unknown or not offered to the parent; a child can only be narrowed',
    });
    for (const id of ["cyclic", "bigint"])
      expect(refused(world, id)).toEqual({
        code: "INVALID_REQUEST",
        message: "metadata must be plain JSON (no cycles, no BigInt values)",
      });
    // Nothing was started by a refused request.
    expect(await world.service.children()).toEqual([]);
    // After the turn, again no parent.
    await expect(world.service.launch({ goal: "anything" })).rejects.toMatchObject({
      code: "NO_ACTIVE_PARENT",
      message: "No active parent session",
    });
  });

  it("a child launched with allowedToolsets is offered only those toolsets (and its report tool with a schema)", async () => {
    const world = await openWorld();
    world.children.set("[narrow-schema]", (request) =>
      messagesOf(request).some((m) => m.role === "tool")
        ? { text: "reported" }
        : { toolCalls: [{ id: "so", name: "structured_output", arguments: { files: 3 } }] },
    );
    await world.turn({
      narrow: { goal: "[narrow] look around", allowedToolsets: ["files"] },
      schema: {
        goal: "[narrow-schema] count the files",
        allowedToolsets: ["files"],
        schema: { type: "object", properties: { files: { type: "number" } }, required: ["files"] },
      },
    });
    const { registry } = world.agent.tools;
    const parentTools = toolNames(world.fake.requests[0]!);
    expect(parentTools).toContain("bash");
    expect(parentTools).toContain("launch_child");

    const narrow = launched(world, "narrow").handle;
    expect(await world.service.wait(narrow, { timeoutMs: 60_000 })).toEqual({
      state: "SUCCEEDED",
      timedOut: false,
    });
    const [first] = childRequests(world.fake, "[narrow]");
    const offered = toolNames(first!);
    expect(offered.length).toBeGreaterThan(0);
    expect(offered.filter((name) => registry.get(name)?.toolset !== "files")).toEqual([]);
    expect(offered).toContain("read");

    const withSchema = launched(world, "schema").handle;
    expect(await world.service.wait(withSchema, { timeoutMs: 60_000 })).toEqual({
      state: "SUCCEEDED",
      timedOut: false,
    });
    const [schemaFirst] = childRequests(world.fake, "[narrow-schema]");
    const schemaOffered = toolNames(schemaFirst!);
    expect(schemaOffered.filter((name) => registry.get(name)?.toolset !== "files")).toEqual([
      "structured_output",
    ]);
    expect(await world.service.result(withSchema)).toMatchObject({
      state: "SUCCEEDED",
      structured: { files: 3 },
    });
  });

  it("a failed child: FAILED, and its result carries the diagnostic (S3), not a transcript", async () => {
    const world = await openWorld({
      config: (base) => ({ ...base, retry: { ...base.retry, max_retries: 0 } }),
    });
    world.children.set("[fails]", () => ({
      status: 400,
      body: { error: { message: "the request was refused" } },
    }));
    await world.turn({ failing: { goal: "[fails] try it" } });
    const { handle } = launched(world, "failing");
    expect(await world.service.wait(handle, { timeoutMs: 60_000 })).toEqual({
      state: "FAILED",
      timedOut: false,
    });
    const result = await world.service.result(handle);
    expect(result).toMatchObject({ state: "FAILED", reason: "error", text: "", hash: sha256("") });
    const diagnostic = "diagnostic" in result ? (result.diagnostic ?? "") : "";
    expect(diagnostic).toMatch(/^[A-Z_]+: /);
    expect(Buffer.byteLength(diagnostic)).toBeLessThanOrEqual(4_096);
  });

  it("a terminal result older than subagents.result_retention_hours is RESULT_EXPIRED; its state stays", async () => {
    const world = await openWorld({
      config: (base) => ({ ...base, subagents: { ...DEFAULT_CONFIG.subagents, result_retention_hours: 1 } }),
    });
    // A fresh child: its result is there.
    await world.turn({ fresh: { goal: "[fresh] quick" } });
    const fresh = launched(world, "fresh").handle;
    expect(await world.service.wait(fresh, { timeoutMs: 60_000 })).toEqual({
      state: "SUCCEEDED",
      timedOut: false,
    });
    expect(await world.service.result(fresh)).toMatchObject({ state: "SUCCEEDED", text: "child done" });

    // A child of this parent that settled two hours ago (its events written as its own agent would have).
    const parentId = world.agent.sessionId;
    const delegation: Delegation = { parentId, depth: 1, mode: "spawn", task: "old work", via: "api" };
    const child = await world.store.createSession({ parentId, kind: "subagent", metadata: { delegation } });
    const longAgo = new Date(Date.now() - 2 * RETENTION_MS).toISOString();
    await world.store.append(
      child.id,
      [
        { type: "session/start", data: { kind: "subagent", cwd: "/" }, at: longAgo },
        {
          type: "subagent/settled",
          data: { childId: child.id, parentId, reason: "completed", closingMessage: "old answer" },
          at: longAgo,
        },
      ],
      0,
    );
    const old = await world.service.lifecycle.issue(child.id, parentId);
    expect(await world.service.status(old)).toEqual({ state: "SUCCEEDED" });
    expect(await world.service.result(old)).toEqual({ state: "SUCCEEDED", code: "RESULT_EXPIRED" });
    expect(await world.service.wait(old, { timeoutMs: 0 })).toEqual({ state: "SUCCEEDED", timedOut: false });
    // The fresh one is still within the retention.
    expect(await world.service.result(fresh)).toMatchObject({ state: "SUCCEEDED", text: "child done" });
  });
});
