/**
 * Issue 20 item 6: the server's own adapter, `GET /v1/sessions/:id/speech` as a WebSocket: one JSON header
 * with the PCM format, binary frames, an end message per spoken reply; the bearer token on the upgrade.
 * The model is the scripted fake provider; the voice is a local openai wire server (no internet).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import {
  api,
  startScenarioProvider,
  startServer,
  type TestServer,
  testConfig,
  tmpHome,
  turnEnd,
  waitForEvent,
} from "../server/harness.js";
import { pieces, startWireServer, TEST_KEY, type WireServer } from "./wire-servers.js";

const TOKEN = "speech-route-token-0123";
const AUTH = { authorization: `Bearer ${TOKEN}` };

let store: Store;
let fake: FakeProvider;
let voice: WireServer;
let server: TestServer;
let scenario: (name: string, fn: () => { text: string }) => string;

beforeAll(async () => {
  const { home, workspace } = tmpHome("bdsh-speech-");
  store = await openStore({ home });
  ({ fake, scenario } = await startScenarioProvider());
  voice = await startWireServer("openai", {
    chunks: () => pieces(Buffer.alloc(960, 1), Buffer.alloc(960, 2)),
  });
  const config = testConfig(fake.url);
  config.tts = { ...config.tts, provider: "openai", openai: { api_key: TEST_KEY, base_url: voice.baseUrl } };
  server = await startServer({ store, config, home, workspace, token: TOKEN });
});

afterAll(async () => {
  await server?.app.close();
  await voice?.close();
  await fake?.close();
  await store?.close();
});

type Received = {
  json: Record<string, unknown>[];
  binary: number[];
  all: (Record<string, unknown> | number)[];
};

function connect(path: string, headers: Record<string, string>) {
  const socket = new WebSocket(`${server.url.replace("http", "ws")}${path}`, { headers });
  const received: Received = { json: [], binary: [], all: [] };
  const waiters: (() => void)[] = [];
  socket.on("message", (data, isBinary) => {
    if (isBinary) {
      const size = (data as Buffer).length;
      received.binary.push(size);
      received.all.push(size);
    } else {
      const json = JSON.parse(data.toString()) as Record<string, unknown>;
      received.json.push(json);
      received.all.push(json);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  const until = async (match: (r: Received) => boolean) => {
    while (!match(received)) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { socket, received, until };
}

function refusal(path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${server.url.replace("http", "ws")}${path}`, { headers });
    socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    socket.on("open", () => reject(new Error("the upgrade was accepted")));
    socket.on("error", () => undefined);
  });
}

async function createSession(text: string): Promise<string> {
  const created = await api(server.url, "POST", "/v1/sessions", { text }, AUTH);
  expect(created.status).toBe(201);
  return String(created.body.id);
}

describe("GET /v1/sessions/:id/speech", () => {
  it("refuses an upgrade without the bearer token (401) and for an unknown session (404)", async () => {
    const id = await createSession(`${scenario("refuse", () => ({ text: "ok" }))} hi`);
    expect(await refusal(`/v1/sessions/${id}/speech`, {})).toBe(401);
    expect(await refusal(`/v1/sessions/${id}/speech`, { authorization: "Bearer wrong-token-xyz" })).toBe(401);
    expect(await refusal("/v1/sessions/no-such-session/speech", AUTH)).toBe(404);
  });

  it("streams a reply as a JSON header, binary PCM frames and an end message, with no whole-file reply after", async () => {
    const marker = scenario("speak", () => ({ text: "Hello there. This is spoken as it streams." }));
    const id = await createSession(`${marker} warm up`);
    await waitForEvent(store, id, turnEnd); // the agent is cached on this server
    const client = connect(`/v1/sessions/${id}/speech`, AUTH);
    await client.until((r) => r.json.some((m) => m.type === "ready"));
    await api(server.url, "POST", `/v1/sessions/${id}/messages`, { text: "again" }, AUTH);
    await client.until((r) => r.json.some((m) => m.type === "end"));
    const start = client.received.json.find((m) => m.type === "start");
    expect(start).toMatchObject({
      mode: "stream",
      format: { encoding: "pcm_s16le", sample_rate: 24_000, channels: 1 },
    });
    const turn = start?.turn;
    const startAt = client.received.all.indexOf(start!);
    const endAt = client.received.all.findIndex((m) => typeof m === "object" && m.type === "end");
    expect(client.received.all.slice(startAt + 1, endAt).every((m) => typeof m === "number")).toBe(true);
    expect(endAt - startAt - 1).toBeGreaterThanOrEqual(2); // binary frames in between
    // The next thing this client hears is the next turn's stream, never a whole-file copy of this one.
    await api(server.url, "POST", `/v1/sessions/${id}/messages`, { text: "once more" }, AUTH);
    await client.until((r) => r.json.filter((m) => m.type === "start").length >= 2);
    const next = client.received.json.filter((m) => m.type === "start")[1];
    expect(next).toMatchObject({ mode: "stream" });
    expect(next?.turn).not.toBe(turn);
    expect(JSON.stringify(client.received.json)).not.toContain(TEST_KEY);
    client.socket.close();
  });
});

describe("the speech WebSocket from a browser (issue 21: the dashboard's speak button)", () => {
  const bearer = (token: string) => `bdsh.bearer.${Buffer.from(token).toString("base64url")}`;

  it("takes the token as a `bdsh.bearer.<base64url>` subprotocol and answers with `bdsh`, never echoing the token", async () => {
    const id = await createSession(`${scenario("subprotocol", () => ({ text: "ok" }))} hi`);
    const url = `${server.url.replace("http", "ws")}/v1/sessions/${id}/speech`;
    const socket = new WebSocket(url, ["bdsh", bearer(TOKEN)]);
    const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
      socket.on("message", (data) => resolve(JSON.parse(data.toString()) as Record<string, unknown>));
      socket.on("error", reject);
    });
    expect(socket.protocol).toBe("bdsh");
    expect(ready).toMatchObject({ type: "ready", session: id });
    socket.close();
    const wrong = await new Promise<number>((resolve) => {
      const refused = new WebSocket(url, ["bdsh", bearer("not-the-token")]);
      refused.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      refused.on("error", () => undefined);
    });
    expect(wrong).toBe(401);
  });

  it("is found under the host app's prefix", async () => {
    const { home, workspace } = tmpHome("bdsh-speech-prefix-");
    const prefixed = await startServer({
      store,
      config: testConfig(fake.url),
      home,
      workspace,
      token: TOKEN,
      prefix: "/agents",
    } as Parameters<typeof startServer>[0]);
    try {
      const id = await createSession(`${scenario("prefixed", () => ({ text: "ok" }))} hi`);
      const socket = new WebSocket(`${prefixed.url.replace("http", "ws")}/agents/v1/sessions/${id}/speech`, {
        headers: AUTH,
      });
      const first = await new Promise<string>((resolve, reject) => {
        socket.on("message", (data) => resolve(data.toString()));
        socket.on("error", reject);
      });
      expect(JSON.parse(first)).toMatchObject({ type: "ready" });
      socket.close();
    } finally {
      await prefixed.app.close();
    }
  });
});
