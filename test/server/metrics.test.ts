/**
 * Issue 37 item 2: `GET /metrics` in the Prometheus text format, parsed with a real parser, scraped during
 * and after a scripted load of several sessions; the counters equal what the stored events say.
 */
import { rmSync } from "node:fs";
import parsePrometheusTextFormat, { type MetricFamily } from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { addUsage, emptyUsage, usageTotalsOf } from "../../src/log/usage.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import { waitUntil } from "../support/wait.js";
import {
  api,
  readSse,
  type Scenario,
  startScenarioProvider,
  startServer,
  type TestServer,
  testConfig,
  tmpHome,
  turnEnd,
  waitForEvent,
} from "./harness.js";

let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;
let store: Store;
let server: TestServer;
let open: TestServer;
let dirs: ReturnType<typeof tmpHome>;

beforeAll(async () => {
  ({ fake, scenario } = await startScenarioProvider());
  dirs = tmpHome("bdsh-metrics-");
  store = await openStore({ home: dirs.home });
  server = await startServer({
    store,
    config: testConfig(fake.url),
    home: dirs.home,
    workspace: dirs.workspace,
  });
  open = await startServer({
    store,
    config: testConfig(fake.url, { metrics_public: true }),
    home: dirs.home,
    workspace: dirs.workspace,
  });
});

afterAll(async () => {
  await server?.app.close();
  await open?.app.close();
  await store?.close();
  await fake?.close();
  rmSync(dirs.home, { recursive: true, force: true });
});

async function scrape(target = server, headers = target.auth): Promise<Map<string, MetricFamily>> {
  const response = await fetch(`${target.url}/metrics`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return new Map(parsePrometheusTextFormat(await response.text()).map((f) => [f.name, f]));
}

/** The sum over the series matching every given label (0 when absent); a histogram's is its count. */
function sample(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}) {
  const family = families.get(name);
  const series = family?.metrics.filter((m) =>
    Object.entries(labels).every(([key, value]) => m.labels?.[key] === value),
  );
  return (series ?? []).reduce((sum, m) => sum + Number(m.value ?? m.count ?? 0), 0);
}

/** Observations in a histogram (the parser keeps its `+Inf` buckets, not its labels). */
function observations(families: Map<string, MetricFamily>, name: string) {
  const family = families.get(name);
  expect(family?.type).toBe("HISTOGRAM");
  return (family?.metrics ?? []).reduce((sum, m) => sum + Number(m.buckets?.["+Inf"] ?? 0), 0);
}

function count<T extends LogEvent["type"]>(events: LogEvent[], type: T, where: (e: LogEvent<T>) => boolean) {
  return events.filter((e) => e.type === type && where(e as LogEvent<T>)).length;
}

describe("GET /metrics (issue 37 item 2)", () => {
  it("needs the token unless server.metrics_public", async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    const families = await scrape(open, {});
    expect(families.has("bdsh_turns_total")).toBe(true);
  });

  it("counts turns, steps, tool calls and tokens as the stored events do, during and after a load", async () => {
    const marker = scenario("load", (_request, messages) => {
      const results = messages.filter((m) => m.role === "tool").length;
      if (results < 2)
        return {
          frameDelayMs: 5,
          toolCalls: [{ id: `g-${results}`, name: "glob", arguments: { pattern: "*.none" } }],
        };
      return { text: "finished", usage: { input: 50, cacheRead: 10, output: 4 }, frameDelayMs: 5 };
    });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await api(
        server.url,
        "POST",
        "/v1/sessions",
        { text: `${marker} job ${i}` },
        server.auth,
      );
      expect(created.status).toBe(201);
      ids.push(created.body.id as string);
    }
    // During: the exposition parses while sessions run, and counters never exceed the final counts.
    const during = await scrape();
    expect(sample(during, "bdsh_turns_total")).toBeLessThanOrEqual(ids.length);
    expect(during.get("bdsh_sessions_driving")?.type).toBe("GAUGE");
    expect(during.get("bdsh_ready_queue_depth")?.type).toBe("GAUGE");

    for (const id of ids) await waitForEvent(store, id, turnEnd);
    const events = (await Promise.all(ids.map((id) => store.read(id)))).flat();
    const turns = count(events, "turn/end", (e) => e.data.reason === "completed");
    const steps = {
      continue: count(events, "step/end", (e) => e.data.result === "continue"),
      completed: count(events, "step/end", (e) => e.data.result === "completed"),
    };
    const tools = count(events, "tool/result", (e) => e.data.name === "glob" && !e.data.isError);
    let usage = emptyUsage();
    for (const e of events)
      if (e.type === "assistant/message" && e.data.usage)
        usage = addUsage(usage, usageTotalsOf(e.data.usage));
    expect(turns).toBe(ids.length);
    expect(tools).toBe(ids.length * 2);

    const after = await waitUntil(async () => {
      const families = await scrape();
      return sample(families, "bdsh_turns_total", { outcome: "completed" }) === turns ? families : undefined;
    }, "the turn counter to reach the stored turns");
    expect(sample(after, "bdsh_steps_total", { outcome: "continue" })).toBe(steps.continue);
    expect(sample(after, "bdsh_steps_total", { outcome: "completed" })).toBe(steps.completed);
    expect(sample(after, "bdsh_tool_calls_total", { tool: "glob", outcome: "ok" })).toBe(tools);
    expect(sample(after, "bdsh_tokens_total", { kind: "input" })).toBe(usage.input);
    expect(sample(after, "bdsh_tokens_total", { kind: "cached_input" })).toBe(usage.cachedInput);
    expect(sample(after, "bdsh_tokens_total", { kind: "output" })).toBe(usage.output);
    expect(sample(after, "bdsh_cost_usd_total")).toBeGreaterThan(0);
    // One model request per step (this load has no failed attempt), each timed; the store was timed too.
    expect(observations(after, "bdsh_model_request_duration_seconds")).toBe(
      count(events, "assistant/message", () => true),
    );
    expect(observations(after, "bdsh_model_time_to_first_token_seconds")).toBeGreaterThan(0);
    expect(observations(after, "bdsh_store_operation_duration_seconds")).toBeGreaterThan(0);
    expect(sample(after, "bdsh_ready_queue_depth")).toBe(0);
    expect(sample(after, "bdsh_ready_queue_oldest_age_seconds")).toBe(0);
    expect(sample(after, "bdsh_approvals_waiting")).toBe(0);
  });

  it("counts open event streams", async () => {
    const created = await api(server.url, "POST", "/v1/sessions", {}, server.auth);
    const id = created.body.id as string;
    let streaming = 0;
    const stream = readSse(`${server.url}/v1/sessions/${id}/events`, () => streaming > 0, server.auth);
    streaming = await waitUntil(async () => sample(await scrape(), "bdsh_sse_clients"), "an SSE client");
    expect(streaming).toBe(1);
    await api(server.url, "POST", `/v1/sessions/${id}/messages`, { text: "hello" }, server.auth);
    await stream;
    await waitUntil(async () => sample(await scrape(), "bdsh_sse_clients") === 0, "the stream to close");
  });
});
