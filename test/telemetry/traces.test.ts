/**
 * Issue 37 item 1: GenAI traces received by a real OTLP/HTTP receiver (JSON, as the SDK's HTTP exporter
 * sends it) from a server driving a scripted session: the span tree, the GenAI attributes, token counts
 * equal to the stored usage, the caller's trace continued through the inbox row, and no secret canary in
 * any attribute although prompts and completions are captured (through the redactor).
 */

import { rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { usageTotalsOf } from "../../src/log/usage.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { startOtlpTracing, type TracingHandle } from "../../src/telemetry/otlp-export.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import {
  api,
  type Scenario,
  startScenarioProvider,
  startServer,
  type TestServer,
  testConfig,
  tmpHome,
  turnEnd,
  waitForEvent,
} from "../server/harness.js";
import { testAgentEnv } from "../support/test-agent.js";
import { waitUntil } from "../support/wait.js";

const CANARY = "sk-canary-7f3e9a1c55d04b2e";

type OtlpValue = {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values: OtlpValue[] };
};
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number };
};

function plain(value: OtlpValue): unknown {
  if (value.arrayValue) return value.arrayValue.values.map(plain);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

function attrs(span: OtlpSpan): Record<string, unknown> {
  return Object.fromEntries(span.attributes.map((a) => [a.key, plain(a.value)]));
}

/** A small OTLP/HTTP receiver: POST /v1/traces with a JSON ExportTraceServiceRequest. */
async function startReceiver(): Promise<{ server: Server; url: string; spans: OtlpSpan[] }> {
  const spans: OtlpSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.url !== "/v1/traces" || !String(request.headers["content-type"]).includes("json")) {
        response.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const resource of body.resourceSpans)
        for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${address.port}`, spans };
}

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let tracing: TracingHandle;
let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;
let store: Store;
let server: TestServer;
let home: string;

beforeAll(async () => {
  receiver = await startReceiver();
  tracing = (await startOtlpTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }))!;
  ({ fake, scenario } = await startScenarioProvider());
  const dirs = tmpHome("bdsh-traces-");
  home = dirs.home;
  store = await openStore({ home });
  const config = testConfig(fake.url);
  server = await startServer({
    store,
    config: { ...config, telemetry: { capture_content: true } },
    home,
    workspace: dirs.workspace,
    env: testAgentEnv({ DEEPSEEK_API_KEY: CANARY }),
  });
});

afterAll(async () => {
  await server?.app.close();
  await store?.close();
  await tracing?.shutdown();
  await fake?.close();
  await new Promise((resolve) => receiver?.server.close(resolve));
  rmSync(home, { recursive: true, force: true });
});

describe("GenAI traces over OTLP (issue 37 item 1)", () => {
  it("a turn is invoke_agent with chat and execute_tool children, continuing the caller's trace", async () => {
    const marker = scenario("traced", (_request, messages) => {
      if (!messages.some((m) => m.role === "tool"))
        return { toolCalls: [{ id: "call-glob-1", name: "glob", arguments: { pattern: "*.md" } }] };
      return { text: `done, and the key is ${CANARY}`, usage: { input: 120, cacheRead: 40, output: 9 } };
    });
    const created = await api(server.url, "POST", "/v1/sessions", {}, server.auth);
    const id = created.body.id as string;
    const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    const sent = await api(
      server.url,
      "POST",
      `/v1/sessions/${id}/messages`,
      { text: `${marker} list the notes; my key is ${CANARY}` },
      { ...server.auth, traceparent: `00-${callerTrace}-${callerSpan}-01` },
    );
    expect(sent.status).toBe(202);
    await waitForEvent(store, id, turnEnd);
    await tracing.flush();
    const mine = () => receiver.spans.filter((s) => attrs(s)["gen_ai.conversation.id"] === id);
    await waitUntil(() => mine().some((s) => s.name.startsWith("invoke_agent")), "the turn's spans");

    const spans = mine();
    const turn = spans.find((s) => s.name === "invoke_agent bdsh")!;
    expect(turn.traceId).toBe(callerTrace);
    expect(turn.parentSpanId).toBe(callerSpan);
    expect(attrs(turn)).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "bdsh",
      "bdsh.turn.reason": "completed",
    });

    const events = await store.read(id);
    const replies = events.filter((e): e is LogEvent<"assistant/message"> => e.type === "assistant/message");
    const chats = spans.filter((s) => s.name === `chat ${replies[0]!.data.model}`);
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.traceId).toBe(callerTrace);
      expect(chat.parentSpanId).toBe(turn.spanId);
    }
    // Token counts equal the stored usage, in the conventions' terms (input includes cached input).
    const byAttempt = chats.map(attrs).sort((a, b) => Number(a["bdsh.step"]) - Number(b["bdsh.step"]));
    replies.forEach((reply, i) => {
      const totals = usageTotalsOf(reply.data.usage!);
      expect(byAttempt[i]).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": reply.data.model,
        "gen_ai.usage.input_tokens": totals.input + totals.cachedInput,
        "gen_ai.usage.output_tokens": totals.output,
        "gen_ai.usage.cache_read.input_tokens": totals.cachedInput,
        "gen_ai.response.finish_reasons": [reply.data.finish],
        "bdsh.request.attempt": 1,
      });
    });
    expect(byAttempt[1]).toMatchObject({ "gen_ai.usage.input_tokens": 160, "gen_ai.usage.output_tokens": 9 });

    const call = events.find((e): e is LogEvent<"tool/call"> => e.type === "tool/call")!;
    const tool = spans.find((s) => s.name === "execute_tool glob")!;
    expect(tool.parentSpanId).toBe(turn.spanId);
    expect(attrs(tool)).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "glob",
      "gen_ai.tool.call.id": call.data.callId,
      "bdsh.tool.outcome": "ok",
    });
    expect(attrs(tool)["bdsh.tool.duration_ms"]).toEqual(expect.any(Number));

    // Content was captured (opt-in), through the redactor: the canary never leaves the process.
    const captured = chats.map((c) => String(attrs(c)["gen_ai.input.messages"])).join("\n");
    expect(captured).toContain("list the notes");
    expect(captured).toContain("[REDACTED]");
    for (const span of receiver.spans) expect(JSON.stringify(span)).not.toContain(CANARY);
  });

  it("a subagent's turn is a child of the parent's execute_tool span, in the same trace", async () => {
    const marker = scenario("delegating", (_request, messages) => {
      const texts = messages.map((m) =>
        typeof m.content === "string" ? m.content : JSON.stringify(m.content),
      );
      if (texts.some((t) => t.includes("CHILD TASK"))) return { text: "child finished" };
      if (texts.some((t) => t.includes("Background subagent"))) return { text: "thanks" };
      if (!messages.some((m) => m.role === "tool"))
        return { toolCalls: [{ id: "spawn-1", name: "subagent", arguments: { task: "CHILD TASK: look" } }] };
      return { text: "waiting for the child" };
    });
    const created = await api(
      server.url,
      "POST",
      "/v1/sessions",
      { text: `${marker} delegate` },
      server.auth,
    );
    const parentId = created.body.id as string;
    const started = await waitForEvent(
      store,
      parentId,
      (e): e is LogEvent<"subagent/started"> => e.type === "subagent/started",
    );
    const childId = started.data.childId;
    await waitForEvent(store, childId, turnEnd);
    const childTurn = await waitUntil(async () => {
      await tracing.flush();
      return receiver.spans.find(
        (s) => s.name === "invoke_agent bdsh" && attrs(s)["gen_ai.conversation.id"] === childId,
      );
    }, "the child's turn span");
    const spawn = receiver.spans.find(
      (s) => s.name === "execute_tool subagent" && attrs(s)["gen_ai.conversation.id"] === parentId,
    )!;
    expect(childTurn.traceId).toBe(spawn.traceId);
    expect(childTurn.parentSpanId).toBe(spawn.spanId);
    expect(attrs(childTurn)["bdsh.session.kind"]).toBe("subagent");
  });
});
