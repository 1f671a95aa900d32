/**
 * Issue 30, route 1 over plain HTTP: the dashboard's sign-in trades the token for a session cookie
 * (src/server/dashboard-session.ts), and state changes signed in by that cookie must come from the server's
 * own origin. The browser side (what reaches the profile on disk, a real cross-origin page) is
 * test/dashboard/token-storage.test.ts.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import { startScenarioProvider, startServer, type TestServer, testConfig, tmpHome } from "./harness.js";

let fake: FakeProvider;
let store: Store;
let server: TestServer;
let origin = "";

type Reply = { status: number; setCookie: string[]; body: Record<string, unknown> };

/** One request with exactly these headers (fetch would add or refuse some, Origin among them). */
function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
  const { port } = new URL(server.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        headers: {
          host: `localhost:${port}`,
          ...(payload === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            setCookie: res.headers["set-cookie"] ?? [],
            body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          }),
        );
      },
    );
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

async function signIn(): Promise<string> {
  const reply = await send("POST", "/v1/sign-in", { origin }, { token: server.token });
  expect(reply.status).toBe(200);
  return reply.setCookie[0]!.split(";")[0]!;
}

beforeAll(async () => {
  const { home, workspace } = tmpHome("bdsh-sign-in-");
  ({ fake } = await startScenarioProvider());
  store = await openStore({ home });
  server = await startServer({ store, config: testConfig(fake.url), home, workspace });
  origin = `http://localhost:${new URL(server.url).port}`;
});

afterAll(async () => {
  await server?.app.close();
  await store?.close();
  await fake?.close();
});

describe("the dashboard's sign-in (issue 30)", () => {
  it("the token buys an HttpOnly SameSite=Strict session cookie (no expiry) that is not the token; a wrong one is 401", async () => {
    const wrong = await send("POST", "/v1/sign-in", { origin }, { token: "wrong" });
    expect(wrong.status).toBe(401);
    expect(wrong.setCookie).toEqual([]);
    const reply = await send("POST", "/v1/sign-in", { origin }, { token: server.token });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ signedIn: true });
    expect(reply.setCookie).toHaveLength(1);
    const attributes = reply.setCookie[0]!.split("; ");
    expect(attributes[0]).toMatch(/^bdsh_session=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(attributes.slice(1)).toEqual(["Path=/", "HttpOnly", "SameSite=Strict"]);
    expect(reply.setCookie[0]).not.toContain(server.token);
  });

  it("the cookie authenticates reads; a forged or missing one is 401; sign-in reports the state", async () => {
    const cookie = await signIn();
    expect((await send("GET", "/v1/sessions", { cookie })).status).toBe(200);
    expect((await send("GET", "/v1/sign-in", { cookie })).body).toEqual({ signedIn: true });
    const [name, value] = cookie.split("=") as [string, string];
    const forged = `${name}=${value.slice(0, -2)}${value.endsWith("AA") ? "BB" : "AA"}`;
    expect((await send("GET", "/v1/sessions", { cookie: forged })).status).toBe(401);
    expect((await send("GET", "/v1/sign-in", { cookie: forged })).body).toEqual({ signedIn: false });
    expect((await send("GET", "/v1/sessions", {})).status).toBe(401);
  });

  it("a state change signed in by cookie needs this origin's Origin: none or another is 403 FORBIDDEN_ORIGIN, nothing made", async () => {
    const cookie = await signIn();
    const before = (await store.listSessions({ limit: 100 })).length;
    const attempts: Record<string, string>[] = [
      { cookie },
      { cookie, origin: "http://localhost:1" },
      { cookie, origin: "null" },
    ];
    for (const headers of attempts) {
      const refused = await send("POST", "/v1/sessions", headers, { title: "csrf" });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ error: { code: "FORBIDDEN_ORIGIN", message: expect.any(String) } });
    }
    expect((await store.listSessions({ limit: 100 })).length).toBe(before);
    expect((await send("POST", "/v1/sessions", { cookie, origin }, { title: "mine" })).status).toBe(201);
  });

  it("another origin can neither sign a browser in nor out, nor change state with the bearer token", async () => {
    const elsewhere = { origin: "http://evil.example" };
    const signInElsewhere = await send("POST", "/v1/sign-in", elsewhere, { token: server.token });
    expect(signInElsewhere.status).toBe(403);
    expect(signInElsewhere.setCookie).toEqual([]);
    expect((await send("POST", "/v1/sign-out", elsewhere, {})).status).toBe(403);
    const bearer = await send("POST", "/v1/sessions", { ...server.auth, ...elsewhere }, { title: "x" });
    expect(bearer.body).toMatchObject({ error: { code: "FORBIDDEN_ORIGIN" } });
    // A client that is not a browser sends no Origin: the bearer token alone still works.
    expect((await send("POST", "/v1/sessions", server.auth, { title: "cli" })).status).toBe(201);
  });

  it("the speech WebSocket takes the cookie from its own origin only", async () => {
    const cookie = await signIn();
    const upgrade = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(
          `${server.url.replace("http", "ws")}/v1/sessions/no-such-session/speech`,
          {
            headers,
          },
        );
        socket.on("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
        socket.on("open", () => reject(new Error("the upgrade was accepted")));
        socket.on("error", () => undefined);
      });
    const own = `http://${new URL(server.url).host}`;
    expect(await upgrade({ cookie, origin: own })).toBe(404); // signed in: the session is what is missing
    expect(await upgrade({ cookie, origin: "http://localhost:1" })).toBe(401);
    expect(await upgrade({ cookie })).toBe(401);
  });

  it("sign-out expires the cookie", async () => {
    const cookie = await signIn();
    const reply = await send("POST", "/v1/sign-out", { cookie, origin }, {});
    expect(reply.status).toBe(200);
    expect(reply.setCookie[0]).toMatch(/^bdsh_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);
  });
});
