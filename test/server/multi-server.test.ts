/**
 * Issue 8 items 2–4 with two in-process servers on one PostgreSQL database (the run's `databaseUrl`), each
 * with its own store (its own pool and listener), as two `bdsh serve` processes would be. Server A drives;
 * server B is a stream-and-control replica here (its agents never open), so which server drives is
 * deterministic: B serves A's session stream, relays a cancel, and queues an approval answer, and A sees
 * each through the shared rows and NOTIFY alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
import { waitUntil } from "../support/wait.js";
import {
  api,
  deferred,
  readSse,
  type Scenario,
  type SseFrame,
  startScenarioProvider,
  startServer,
  type TestServer,
  testConfig,
  tmpHome,
  toolResults,
  turnEnd,
  waitForEvent,
} from "./harness.js";

let storeA: Store;
let storeB: Store;
let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;
let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  const databaseUrl = testDatabaseUrl();
  const { home, workspace } = tmpHome("bdsh-multi-");
  storeA = await openStore({ home, databaseUrl });
  storeB = await openStore({ home, databaseUrl });
  ({ fake, scenario } = await startScenarioProvider());
  const config = testConfig(fake.url);
  a = await startServer({ store: storeA, config, home, workspace, owner: "server-a" });
  b = await startServer({
    store: storeB,
    config,
    home,
    workspace,
    owner: "server-b",
    open: () => Promise.reject(new Error("server B only serves streams in this test")),
  });
});

afterAll(async () => {
  await b?.app.close();
  await a?.app.close();
  await fake?.close();
  await storeB?.close();
  await storeA?.close();
});

const durableIds = (frames: SseFrame[]) => frames.filter((f) => f.event === "event").map((f) => Number(f.id));

describe("several servers on one PostgreSQL", () => {
  it("any server serves any session's stream: B streams, densely and resumably, the turn A drives", async () => {
    const gate = deferred<void>();
    const atStep2 = deferred<void>();
    const marker = scenario("relay", async (_request, messages) => {
      const done = toolResults(messages).length;
      if (done === 1) {
        atStep2.resolve();
        await gate.promise;
      }
      if (done >= 3) return { text: "RELAY DONE" };
      return {
        toolCalls: [
          { id: `r${done}`, name: "bash", arguments: { command: `echo r${done}`, description: "step" } },
        ],
      };
    });
    const created = await api(a.url, "POST", "/v1/sessions", { text: `${marker} three steps` }, a.auth);
    const id = String(created.body.id);
    const stream = readSse(
      `${b.url}/v1/sessions/${id}/events?deltas=false`,
      (frames) => frames.some((f) => f.data.includes('"type":"turn/end"')),
      b.auth,
    );
    await atStep2.promise;
    const seen = await api(b.url, "GET", `/v1/sessions/${id}`, undefined, b.auth);
    expect(seen.body).toMatchObject({ id, drivenBy: "server-a" });
    gate.resolve();
    const { frames } = await stream;

    const events = await storeB.read(id);
    const end = events.find((e): e is LogEvent<"turn/end"> => e.type === "turn/end")!;
    expect(end.data.reason).toBe("completed");
    const ids = durableIds(frames);
    expect(ids.slice(0, end.seq)).toEqual(Array.from({ length: end.seq }, (_, i) => i + 1));
    expect(frames.every((f) => f.event === "event")).toBe(true); // deltas=false: durable events only
    for (const frame of frames)
      expect(JSON.parse(frame.data)).toEqual(JSON.parse(JSON.stringify(events[Number(frame.id) - 1])));

    const cut = Math.floor(end.seq / 2);
    const resumed = await readSse(
      `${b.url}/v1/sessions/${id}/events?deltas=false`,
      (f) => durableIds(f).includes(end.seq),
      { ...b.auth, "last-event-id": String(cut) },
    );
    expect(durableIds(resumed.frames).slice(0, end.seq - cut)).toEqual(
      Array.from({ length: end.seq - cut }, (_, i) => cut + 1 + i),
    );
    // A's drive lets go of the lease in its last append, which follows `turn/end` (the idle status goes with
    // it): seen from B, the session is driven by nobody once that append lands, not necessarily yet.
    await waitUntil(
      async () => (await api(b.url, "GET", `/v1/sessions/${id}`, undefined, b.auth)).body.drivenBy === null,
      "A to let go of the session after its turn",
    );
  });

  it("L7 from another server: cancel on B aborts the turn A drives (outcome remote)", async () => {
    const arrived = deferred<void>();
    const release = deferred<void>();
    const marker = scenario("remote-cancel", async () => {
      arrived.resolve();
      await release.promise;
      return { text: "too late" };
    });
    const created = await api(a.url, "POST", "/v1/sessions", { text: `${marker} hang` }, a.auth);
    const id = String(created.body.id);
    await arrived.promise;
    const cancelled = await api(b.url, "POST", `/v1/sessions/${id}/cancel`, undefined, b.auth);
    expect(cancelled.body).toEqual({ outcome: "remote", discarded: 0 });
    const end = await waitForEvent(storeB, id, turnEnd);
    expect(end.data.reason).toBe("aborted");
    release.resolve();
    expect(await storeB.pendingInbox(id)).toEqual([]);
  });

  it("T16 across servers: an approval answered on B reaches the agent waiting on A", async () => {
    const marker = scenario("remote-approval", (_request, messages) =>
      toolResults(messages).length === 0
        ? {
            toolCalls: [
              {
                id: "x1",
                name: "bash",
                arguments: { command: "pkill -f bdsh-no-such-process || true", description: "stop" },
              },
            ],
          }
        : { text: "approved and ran" },
    );
    const created = await api(a.url, "POST", "/v1/sessions", { text: `${marker} go` }, a.auth);
    const id = String(created.body.id);
    const requested = await waitForEvent(
      storeB,
      id,
      (e): e is LogEvent<"approval/requested"> => e.type === "approval/requested",
    );
    const pending = await api(b.url, "GET", `/v1/sessions/${id}/approvals`, undefined, b.auth);
    expect((pending.body.approvals as Array<{ id: string }>).map((p) => p.id)).toEqual([requested.data.id]);
    const answered = await api(
      b.url,
      "POST",
      `/v1/sessions/${id}/approvals`,
      {
        approvalId: requested.data.id,
        decision: "allow-once",
      },
      b.auth,
    );
    expect(answered.status).toBe(202);
    const end = await waitForEvent(storeB, id, turnEnd);
    expect(end.data.reason).toBe("completed");
    const result = (await storeB.read(id)).find(
      (e): e is LogEvent<"tool/result"> => e.type === "tool/result",
    )!;
    expect(result.data.isError ?? false).toBe(false);
  });

  it("/readyz reports the PostgreSQL store on both servers", async () => {
    for (const server of [a, b]) {
      const ready = await api(server.url, "GET", "/readyz");
      expect(ready).toMatchObject({ status: 200, body: { ready: true, store: "postgres" } });
    }
  });
});
