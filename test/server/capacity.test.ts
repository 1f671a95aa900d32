/**
 * Issue 8 item 3, capacity: each server drives at most `server.max_running_per_server` sessions at once;
 * the rest wait in the inbox rows and whichever server has room claims them (`claimPendingSessions`), so
 * a burst larger than one server's capacity spreads over the servers and every session still completes
 * exactly once. Two in-process servers, each with its own store, on one PostgreSQL database.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import {
  api,
  type Scenario,
  startScenarioProvider,
  startServer,
  type TestServer,
  testConfig,
  tmpHome,
  toolResults,
} from "./harness.js";

const CAP = 2;
let stores: Store[] = [];
let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;
let servers: TestServer[] = [];

beforeAll(async () => {
  const databaseUrl = inject("databaseUrl");
  const { home, workspace } = tmpHome("bdsh-capacity-");
  stores = [await openStore({ home, databaseUrl }), await openStore({ home, databaseUrl })];
  ({ fake, scenario } = await startScenarioProvider());
  const config = testConfig(fake.url, { max_running_per_server: CAP, sweep_interval_ms: 200 });
  servers = await Promise.all(
    stores.map((store, i) => startServer({ store, config, home, workspace, owner: `cap-${i}` })),
  );
});

afterAll(async () => {
  for (const s of servers) await s.app.close();
  await fake?.close();
  for (const s of stores) await s.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("server capacity (max_running_per_server)", () => {
  it("a burst of 12 sessions on 2 servers of capacity 2: at most 4 drive at once, all complete once", async () => {
    let inFlight = 0;
    let peak = 0;
    const marker = scenario("burst", async (_request, messages) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await sleep(40);
      inFlight--;
      const done = toolResults(messages).length;
      if (done >= 2) return { text: "BURST DONE" };
      return {
        toolCalls: [
          { id: `b${done}`, name: "bash", arguments: { command: `echo b${done}`, description: "step" } },
        ],
      };
    });
    // Every session is posted to server 0: the other one gets its share only by claiming from the rows.
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const created = await api(
        servers[0]!.url,
        "POST",
        "/v1/sessions",
        { text: `${marker} go ${i}` },
        servers[0]!.auth,
      );
      expect(created.status).toBe(201);
      ids.push(String(created.body.id));
    }
    const ends = async () => {
      const all: LogEvent[][] = await Promise.all(ids.map((id) => stores[0]!.read(id)));
      return all.map((events) => events.filter((e) => e.type === "turn/end"));
    };
    const deadline = Date.now() + 30_000;
    while ((await ends()).some((e) => e.length === 0) && Date.now() < deadline) await sleep(50);
    const turnEnds = await ends();
    expect(turnEnds.map((e) => e.length)).toEqual(ids.map(() => 1));
    expect(turnEnds.map((e) => (e[0]!.data as { reason: string }).reason)).toEqual(
      ids.map(() => "completed"),
    );
    expect(peak).toBeLessThanOrEqual(2 * CAP);
    for (const id of ids) {
      const results = (await stores[0]!.read(id)).filter((e) => e.type === "tool/result");
      expect(results).toHaveLength(2); // no step ran twice
      expect(await stores[0]!.getLease(sessionLeaseName(id))).toBeUndefined(); // idle holds nothing
    }
    // Both servers drove some (each keeps the agents it drove cached): the second one only ever saw the
    // work through the rows, since every session was posted to the first.
    const cached = await Promise.all(
      servers.map(
        async (s) => ((await api(s.url, "GET", "/readyz")).body.sessions as { cached: number }).cached,
      ),
    );
    expect(cached.every((n) => n > 0)).toBe(true);
    expect(cached.reduce((a, b) => a + b, 0)).toBe(ids.length);
  });
});
