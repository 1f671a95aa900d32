/**
 * The API the dashboard's second round reads, through a real listening server (SQLite, the scripted
 * provider): a session's state for a person (`waiting` on an approval or a question, `errored`,
 * `aborted`), the list by last activity with a cursor and a text search, an unchanged list as a 304,
 * rename, the queued messages the model has not taken, and the history as gzip-compressed JSON pages.
 */
import { get } from "node:http";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventType, LogEvent, NewEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import {
  api,
  readSse,
  type Scenario,
  startScenarioProvider,
  startServer,
  type TestServer,
  testConfig,
  tmpHome,
  toolResults,
  turnEnd,
  waitForEvent,
} from "./harness.js";

const TOKEN = "dashboard-api-token";
const AUTH = { authorization: `Bearer ${TOKEN}` };

let store: Store;
let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;
let server: TestServer;

beforeAll(async () => {
  const { home, workspace } = tmpHome("bdsh-dash-api-");
  store = await openStore({ home });
  ({ fake, scenario } = await startScenarioProvider());
  server = await startServer({
    store,
    config: testConfig(fake.url, { question_timeout_ms: 60_000 }),
    home,
    workspace,
    token: TOKEN,
  });
});

afterAll(async () => {
  await server?.app.close();
  await fake?.close();
  await store?.close();
});

const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  api(server.url, method, path, body, { ...AUTH, ...headers });

const isType =
  <K extends EventType>(type: K) =>
  (event: LogEvent): event is Extract<LogEvent, { type: K }> =>
    event.type === type;

async function create(body: { text?: string; title?: string } = {}): Promise<string> {
  const created = await call("POST", "/v1/sessions", body);
  expect(created.status).toBe(201);
  return String(created.body.id);
}

type Listed = { id: string; state?: string; waitingFor?: string[]; lastTurn?: string | null; title: string };
async function listed(id: string): Promise<Listed> {
  const detail = await call("GET", `/v1/sessions/${id}`);
  expect(detail.status).toBe(200);
  return detail.body as unknown as Listed;
}

describe("a session's state for a person", () => {
  it("is waiting on an approval, then on a question, in the list and the detail; errored and aborted turns show as such", async () => {
    let asked = false;
    const marker = scenario("needs-you", (_request, messages) => {
      const done = toolResults(messages).length;
      if (done === 0)
        return {
          toolCalls: [
            {
              id: "n0",
              name: "bash",
              arguments: { command: "pkill -f bdsh-no-such-process || true", description: "stop" },
            },
          ],
        };
      if (!asked) {
        asked = true;
        return {
          toolCalls: [
            {
              id: "n1",
              name: "ask_user_question",
              arguments: { questions: [{ question: "Add it?", options: ["Yes (Recommended)", "No"] }] },
            },
          ],
        };
      }
      return { text: "done" };
    });
    const id = await create({ text: `${marker} go`, title: "needs a person" });
    const approval = await waitForEvent(store, id, isType("approval/requested"));
    expect(await listed(id)).toMatchObject({ state: "waiting", waitingFor: ["approval"] });
    const list = await call("GET", "/v1/sessions?query=needs%20a%20PERSON");
    expect((list.body.sessions as Listed[]).map((s) => [s.id, s.state, s.waitingFor])).toEqual([
      [id, "waiting", ["approval"]],
    ]);
    await call("POST", `/v1/sessions/${id}/approvals`, {
      approvalId: approval.data.id,
      decision: "allow-once",
    });
    const question = await waitForEvent(store, id, isType("question/asked"));
    expect(await listed(id)).toMatchObject({ state: "waiting", waitingFor: ["question"] });
    await call("POST", `/v1/sessions/${id}/approvals`, { questionId: question.data.id, answers: ["No"] });
    await waitForEvent(store, id, turnEnd);
    expect(await listed(id)).toMatchObject({ state: "idle", waitingFor: [], lastTurn: "completed" });

    // Turns that ended in an error or were cancelled, as the log records them.
    const ended = async (reason: "error" | "aborted") => {
      const sid = await create({ title: `ended ${reason}` });
      const events: NewEvent[] = [
        { type: "turn/start", data: {}, turn: 1 },
        {
          type: "turn/end",
          data: reason === "error" ? { reason, error: { code: "PROVIDER", message: "down" } } : { reason },
          turn: 1,
        },
      ];
      await store.append(sid, events, (await store.getSession(sid))!.lastSeq);
      return sid;
    };
    expect(await listed(await ended("error"))).toMatchObject({ state: "errored", lastTurn: "error" });
    expect(await listed(await ended("aborted"))).toMatchObject({ state: "aborted", lastTurn: "aborted" });
  });
});

describe("the session list", () => {
  it("pages by last activity with a cursor, searches the whole store, and answers an unchanged page with 304", async () => {
    const tag = `page-${Math.random().toString(36).slice(2, 8)}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await create({ title: `${tag} ${i}` }));
    // The first one becomes the most recently active.
    expect((await call("PATCH", `/v1/sessions/${ids[0]}`, { title: `${tag} renamed` })).status).toBe(200);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 4; page++) {
      const q = new URLSearchParams({ query: tag.toUpperCase(), limit: "2" });
      if (cursor) q.set("cursor", cursor);
      const res = await call("GET", `/v1/sessions?${q}`);
      expect(res.status).toBe(200);
      seen.push(...(res.body.sessions as Listed[]).map((s) => s.id));
      cursor = res.body.nextCursor as string | undefined;
      if (!cursor) break;
    }
    expect(seen).toEqual([ids[0], ids[4], ids[3], ids[2], ids[1]]);

    const first = await fetch(`${server.url}/v1/sessions?query=${tag}`, { headers: AUTH });
    const etag = first.headers.get("etag");
    expect(etag).toBeTruthy();
    await first.text();
    const again = await fetch(`${server.url}/v1/sessions?query=${tag}`, {
      headers: { ...AUTH, "if-none-match": etag! },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    await call("PATCH", `/v1/sessions/${ids[2]}`, { title: `${tag} changed` });
    const changed = await fetch(`${server.url}/v1/sessions?query=${tag}`, {
      headers: { ...AUTH, "if-none-match": etag! },
    });
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as { sessions: Listed[] }).sessions[0]!.title).toBe(`${tag} changed`);

    expect((await call("GET", "/v1/sessions?cursor=bm90LWEtY3Vyc29y")).status).toBe(400);
    expect((await call("GET", `/v1/sessions?cursor=${cursor ?? "x"}&before=${ids[0]}`)).status).toBe(400);
    expect((await call("PATCH", `/v1/sessions/${ids[0]}`, { title: "" })).status).toBe(400);
    expect((await call("PATCH", "/v1/sessions/no-such-session", { title: "x" })).status).toBe(404);
  });
});

describe("the list filtered by state, on the server", () => {
  it("finds a session that needs a person behind more sessions than one page reads, whatever its open turn holds", async () => {
    const workspace = `/work/state-${Math.random().toString(36).slice(2, 8)}`;
    // The oldest by activity: a running turn that asked for an approval, then wrote 1,500 more events (a
    // step of many parallel calls and results) — more than one backward read spans.
    const waiter = await store.createSession({ title: "needs a person", metadata: { workspace } });
    // Driven by a live server that waits for the person (with no live holder, this server's next claim
    // pass would take the open turn as an orphan and close it, R1).
    await store.acquireLease(sessionLeaseName(waiter.id), "another-server", 600_000);
    const filler: NewEvent[] = Array.from({ length: 1_500 }, (_, i) => ({
      type: "assistant/message",
      data: { provider: "p", model: "m", finish: "stop", blocks: [{ type: "text", text: `part ${i}` }] },
      turn: 1,
      step: 1,
    }));
    await store.append(
      waiter.id,
      [
        { type: "turn/start", data: {}, turn: 1 },
        {
          type: "approval/requested",
          data: { id: "ap-1", callId: "c-1", tool: "bash", summary: "rm -rf build" },
          turn: 1,
          step: 1,
        },
        ...filler,
      ],
      waiter.lastSeq,
    );
    // 120 idle sessions more recently active than it: the first batch the server reads holds only them.
    for (let i = 0; i < 120; i++) await store.createSession({ title: `idle ${i}`, metadata: { workspace } });

    const waiting = await call(
      "GET",
      `/v1/sessions?state=waiting&workspace=${encodeURIComponent(workspace)}`,
    );
    expect(waiting.status).toBe(200);
    const found = waiting.body.sessions as Listed[];
    expect(found.map((s) => s.id)).toEqual([waiter.id]);
    expect(found[0]).toMatchObject({ state: "waiting", waitingFor: ["approval"] });
    expect(waiting.body.nextCursor).toBeUndefined();

    // Paged: every idle one exactly once, 50 at a time, and none of them when asking for running ones.
    const idle: string[] = [];
    let cursor: string | undefined;
    do {
      const q = new URLSearchParams({ state: "idle", workspace, limit: "50", ...(cursor ? { cursor } : {}) });
      const page = await call("GET", `/v1/sessions?${q}`);
      expect(page.status).toBe(200);
      idle.push(...(page.body.sessions as Listed[]).map((s) => s.id));
      cursor = page.body.nextCursor as string | undefined;
    } while (cursor);
    expect(idle).toHaveLength(120);
    expect(new Set(idle).size).toBe(120);
    const running = await call(
      "GET",
      `/v1/sessions?state=running&workspace=${encodeURIComponent(workspace)}`,
    );
    expect(running.body.sessions).toEqual([]);
    expect((await call("GET", `/v1/sessions?state=waiting&before=${waiter.id}`)).status).toBe(400);
    expect((await call("GET", "/v1/sessions?state=sleepy")).status).toBe(400);
  });
});

describe("queued messages", () => {
  it("lists follow-ups the model has not taken, and cancel says how many it discarded", async () => {
    const id = await create({ title: "queue" });
    // No server drives an idle session without a wake: hold the lease so the rows stay queued.
    const held = await store.acquireLease(sessionLeaseName(id), "someone-else", 60_000);
    expect(held).toBeTruthy();
    await store.enqueueInbox(id, { queue: "next-turn", mode: "followup", source: "human", text: "later" });
    await store.enqueueInbox(id, { queue: "next-step", mode: "steer", source: "human", text: "now" });
    const pending = await call("GET", `/v1/sessions/${id}/messages`);
    expect((pending.body.pending as { mode: string; text: string }[]).map((p) => [p.mode, p.text])).toEqual([
      ["followup", "later"],
      ["steer", "now"],
    ]);
    const cancelled = await call("POST", `/v1/sessions/${id}/cancel`, {});
    expect(cancelled.body.discarded).toBe(2);
    expect((await call("GET", `/v1/sessions/${id}/messages`)).body.pending).toEqual([]);
  });
});

describe("the history in pages", () => {
  it("gives the stored events in gzip-compressed JSON pages, the same objects the stream sends, at a fifth of the bytes or less", async () => {
    const id = await create({ title: "long" });
    const events: NewEvent[] = [];
    for (let turn = 1; turn <= 150; turn++) {
      events.push({ type: "turn/start", data: {}, turn });
      events.push({ type: "user/message", data: { text: `step ${turn}`, source: "human" }, turn });
      events.push({
        type: "assistant/message",
        data: {
          provider: "p",
          model: "m",
          finish: "stop",
          blocks: [{ type: "text", text: `Did step ${turn}; the files are listed below.` }],
        },
        turn,
        step: 1,
      });
      events.push({ type: "turn/end", data: { reason: "completed" }, turn });
    }
    const last = (await store.append(id, events, (await store.getSession(id))!.lastSeq)).at(-1)!.seq;
    const stream = await readSse(
      `${server.url}/v1/sessions/${id}/events?deltas=false`,
      (frames) => frames.length >= last,
      AUTH,
    );
    const streamed = stream.frames.map((f) => JSON.parse(f.data) as unknown);
    const streamBytes = stream.frames.reduce((n, f) => n + Buffer.byteLength(f.data) + 30, 0);

    const pages: unknown[] = [];
    let compressed = 0;
    let after = 0;
    for (;;) {
      const res = await rawGet(`${server.url}/v1/sessions/${id}/history?after=${after}&limit=250`, {
        ...AUTH,
        "accept-encoding": "gzip",
      });
      expect(res.status).toBe(200);
      expect(res.encoding).toBe("gzip");
      compressed += res.body.length;
      const page = JSON.parse(gunzipSync(res.body).toString("utf8")) as {
        events: { seq: number }[];
        lastSeq: number;
        more: boolean;
      };
      pages.push(...page.events);
      expect(page.lastSeq).toBe(last);
      if (!page.more) break;
      after = page.events.at(-1)!.seq;
    }
    expect(pages).toEqual(streamed);
    expect(streamBytes / compressed).toBeGreaterThanOrEqual(5);
    const missing = await call("GET", "/v1/sessions/no-such-session/history");
    expect(missing.status).toBe(404);
  });
});

/** A GET as bytes on the wire (node:http does not decode): the status, the headers and the raw body. */
function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; encoding: string | undefined; body: Buffer }>((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          encoding: res.headers["content-encoding"],
          body: Buffer.concat(chunks),
        }),
      );
    }).on("error", reject);
  });
}
