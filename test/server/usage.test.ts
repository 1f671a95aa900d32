/**
 * M20 over HTTP: `GET /v1/sessions/:id` carries the session's usage and cost, with its children rolled up,
 * on SQLite and on PostgreSQL; the OpenAPI document describes it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
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
} from "./harness.js";

// `model.price` over the table, so the numbers are round: $1 input, $0.5 cached, $2 output per MTok.
const PRICE = { input: 1, cached_input: 0.5, output: 2 };

for (const kind of ["sqlite", "postgres"] as const) {
  describe(`M20 session usage over HTTP (${kind})`, () => {
    let store: Store;
    let fake: FakeProvider;
    let scenario: (name: string, fn: Scenario) => string;
    let server: TestServer;

    beforeAll(async () => {
      const { home, workspace } = tmpHome("bdsh-usage-http-");
      store = await openStore({
        home,
        ...(kind === "postgres" ? { databaseUrl: testDatabaseUrl() } : {}),
      });
      ({ fake, scenario } = await startScenarioProvider());
      const config = testConfig(fake.url);
      server = await startServer({
        store,
        config: { ...config, model: { ...config.model, price: PRICE } },
        home,
        workspace,
      });
    });

    afterAll(async () => {
      await server?.app.close();
      await fake?.close();
      await store?.close();
    });

    const call = (method: string, path: string, body?: unknown) =>
      api(server.url, method, path, body, server.auth);

    it("GET /v1/sessions/:id has the session's tokens and cost, and its children's under withChildren", async () => {
      const marker = scenario(`usage-${kind}`, () => ({
        text: "counted",
        usage: { input: 100, cacheRead: 1000, output: 10 },
      }));
      const created = await call("POST", "/v1/sessions", { text: `${marker} go` });
      const id = String(created.body.id);
      await waitForEvent(store, id, turnEnd);

      const child = await store.createSession({ parentId: id, kind: "subagent" });
      await store.append(
        child.id,
        [
          { type: "turn/start", data: {}, turn: 1 },
          {
            type: "assistant/message",
            data: {
              blocks: [{ type: "text", text: "child" }],
              provider: "deepseek",
              model: "deepseek-flash",
              finish: "stop",
              usage: {
                inputTokens: 20,
                cacheReadTokens: 200,
                cacheWriteTokens: 0,
                outputTokens: 2,
                reasoningTokens: 1,
              },
            },
            turn: 1,
            step: 1,
          },
          { type: "turn/end", data: { reason: "completed" }, turn: 1 },
        ],
        0,
      );

      const got = await call("GET", `/v1/sessions/${id}`);
      expect(got.status).toBe(200);
      expect(got.body.id).toBe(id);
      const own = { requests: 1, input: 100, cachedInput: 1000, output: 10, reasoning: 0 };
      const all = { requests: 2, input: 120, cachedInput: 1200, output: 12, reasoning: 1 };
      const usage = got.body.usage as Record<string, unknown>;
      expect(usage).toMatchObject(own);
      expect(usage.cost).toBeCloseTo((100 * 1 + 1000 * 0.5 + 10 * 2) / 1e6, 12);
      expect(usage.withChildren).toMatchObject(all);
      expect((usage.withChildren as { cost: number }).cost).toBeCloseTo(
        (120 + 1200 * 0.5 + 12 * 2) / 1e6,
        12,
      );

      const childGot = await call("GET", `/v1/sessions/${child.id}`);
      expect(childGot.body.usage).toMatchObject({ requests: 1, input: 20, withChildren: { requests: 1 } });
    });

    it("a session without requests has zero usage and a zero cost", async () => {
      const created = await call("POST", "/v1/sessions", {});
      const got = await call("GET", `/v1/sessions/${String(created.body.id)}`);
      const zero = { requests: 0, input: 0, cachedInput: 0, output: 0, reasoning: 0, cost: 0 };
      expect(got.body.usage).toEqual({ ...zero, withChildren: zero });
    });

    it("the OpenAPI document describes the usage object", async () => {
      const doc = (await call("GET", "/v1/openapi.json")).body as {
        paths: Record<
          string,
          Record<string, { responses: Record<string, { content: Record<string, { schema: unknown }> }> }>
        >;
      };
      const schema = JSON.stringify(doc.paths["/v1/sessions/{id}"]?.get?.responses["200"]?.content);
      for (const field of ["usage", "cachedInput", "reasoning", "withChildren", "cost"])
        expect(schema).toContain(field);
    });
  });
}
