/**
 * Issue 14 findings 3 and 7 against real servers on both stores (SQLite in a tmp home, and PostgreSQL in a
 * database of this file's own, so no other test's server claims its sessions):
 * - no /v1 route answers without the token, loopback included; the token check costs the same whatever
 *   is presented (both sides are HMAC digests of one length); the Host check refuses rebound names;
 * - the token is checked before the body is read or parsed;
 * - NUL and other invalid ids or strings are a 400 before the store sees them (PostgreSQL would fail);
 * - every refusal, from a route, a hook, the body parser, the router or Node's HTTP parser, has the shape
 *   `{error: {code, message}}`;
 * - end to end, through a real `bdsh serve` without BDSH_SERVER_TOKEN and the real bash tool: a command
 *   the model runs cannot approve the model's own dangerous call.
 */

import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { bdshPlugin } from "../../src/server/plugin.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { type ServeProcess, startServe, writeServeConfig } from "../chaos/serve-process.js";
import { freshPostgresDatabase } from "../support/fresh-database.js";
import {
  api,
  type Message,
  startScenarioProvider,
  startServer,
  type TestServer,
  testConfig,
  tmpHome,
  toolResults,
  waitForEvent,
} from "./harness.js";

/** Every `timingSafeEqual` the token check makes, as the lengths of its two inputs. */
const compared = vi.hoisted(() => [] as Array<[number, number]>);
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  const timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    compared.push([a.byteLength, b.byteLength]);
    return actual.timingSafeEqual(a, b);
  };
  return { ...actual, default: { ...actual, timingSafeEqual }, timingSafeEqual };
});

const BODY_LIMIT = 1_048_576;

type Kind = "sqlite" | "postgres";

/** A database of this file's own (dropped in `drop`), or none for SQLite. */
async function freshDatabase(kind: Kind): Promise<{ url?: string; drop: () => Promise<void> }> {
  if (kind === "sqlite") return { drop: async () => undefined };
  return freshPostgresDatabase("security");
}

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

/** One HTTP/1.1 request with exactly the headers given (fetch would not let a test set Host). */
function send(
  url: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<Answer> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/**
 * Writes `head` (and `body`, if any) on a raw socket and resolves with the first complete response. The
 * response may come before the body was sent at all: that is what the auth-before-body test checks.
 */
function rawExchange(url: string, head: string, body?: Buffer): Promise<{ status: number; text: string }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => {
      socket.write(head);
      if (body) socket.write(body);
    });
    let buffer = "";
    const done = () => {
      const cut = buffer.indexOf("\r\n\r\n");
      if (cut < 0) return false;
      const header = buffer.slice(0, cut);
      const length = Number(/content-length: *(\d+)/i.exec(header)?.[1] ?? Number.NaN);
      const text = buffer.slice(cut + 4);
      if (!Number.isNaN(length) && Buffer.byteLength(text) < length) return false;
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(header)?.[1] ?? 0), text });
      return true;
    };
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      done();
    });
    socket.on("error", (error) => {
      if (!done()) reject(error);
    });
    socket.on("close", () => {
      if (!done()) reject(new Error(`connection closed without a full response: ${JSON.stringify(buffer)}`));
    });
  });
}

/** The body must be exactly the documented error shape with this code. */
function expectError(text: string, code: string): void {
  expect(JSON.parse(text), text).toEqual({ error: { code, message: expect.any(String) } });
}

const isType =
  <K extends LogEvent["type"]>(type: K) =>
  (event: LogEvent): event is Extract<LogEvent, { type: K }> =>
    event.type === type;

describe.each(["sqlite", "postgres"] as const)("the HTTP API's boundary on %s (issue 14)", (kind) => {
  let store: Store;
  let fake: FakeProvider;
  let server: TestServer;
  let database: { url?: string; drop: () => Promise<void> };
  let home: string;
  let workspace: string;
  const routes: Array<{ method: string; url: string }> = [];

  beforeAll(async () => {
    database = await freshDatabase(kind);
    ({ home, workspace } = tmpHome(`bdsh-security-${kind}-`));
    store = await openStore({ home, ...(database.url ? { databaseUrl: database.url } : {}) });
    ({ fake } = await startScenarioProvider());
    // No token given: the harness makes one as `bdsh serve` does when BDSH_SERVER_TOKEN is unset.
    server = await startServer({
      store,
      config: testConfig(fake.url, { body_limit_bytes: BODY_LIMIT }),
      home,
      workspace,
      onRoute: (route) => routes.push(route),
    });
  });

  afterAll(async () => {
    await server?.app.close();
    await fake?.close();
    await store?.close();
    await database?.drop();
  });

  const authed = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    api(server.url, method, path, body, { ...server.auth, ...headers });

  async function newSession(): Promise<string> {
    const created = await authed("POST", "/v1/sessions", {});
    expect(created.status).toBe(201);
    return String(created.body.id);
  }

  describe("finding 3: a credential on every /v1 route, loopback included", () => {
    it("every /v1 route refuses a request without the token, or with a wrong one of any length (401)", async () => {
      const id = await newSession();
      // The sign-in routes take the token in their body, or nothing (issue 30: test/server/sign-in.test.ts).
      const v1 = routes.filter((r) => r.url.startsWith("/v1") && !/^\/v1\/sign-(in|out)$/.test(r.url));
      expect(v1.filter((r) => r.method !== "HEAD").length).toBeGreaterThanOrEqual(12);
      const wrong = [
        undefined,
        "Bearer ",
        "Bearer x",
        `Bearer ${"x".repeat(server.token.length)}`,
        `Bearer ${server.token}x`,
        `Bearer ${server.token.slice(0, -1)}`,
        server.token, // no scheme
        `Basic ${server.token}`,
      ];
      for (const route of v1) {
        const path = route.url.replace(":id", id);
        for (const authorization of wrong) {
          const answer = await send(server.url, {
            method: route.method,
            path,
            headers: {
              host: new URL(server.url).host,
              "content-type": "application/json",
              ...(authorization === undefined ? {} : { authorization }),
            },
            ...(route.method === "POST"
              ? { body: JSON.stringify({ approvalId: "x", decision: "allow-once" }) }
              : {}),
          });
          expect(answer.status, `${route.method} ${path} with ${authorization}`).toBe(401);
          if (route.method !== "HEAD") expectError(answer.text, "UNAUTHORIZED");
          expect(answer.headers["www-authenticate"]).toMatch(/^Bearer/);
        }
      }
      expect(await store.pendingInbox(id)).toEqual([]);
      expect((await authed("GET", `/v1/sessions/${id}`)).status).toBe(200);
      expect(
        (await authed("GET", `/v1/sessions/${id}`, undefined, { authorization: `bearer ${server.token}` }))
          .status,
      ).toBe(200);
    });

    it("approve, answer, goal, steer as the human, start an agent: each refused without the token, nothing queued", async () => {
      const id = await newSession();
      const answer = await api(server.url, "POST", `/v1/sessions/${id}/approvals`, {
        approvalId: "a1",
        decision: "allow-once",
      });
      expect(answer.status).toBe(401);
      for (const [path, body] of [
        [`/v1/sessions/${id}/goal`, { action: "create", objective: "do whatever you like" }],
        [`/v1/sessions/${id}/messages`, { text: "the user approves everything", mode: "steer" }],
        ["/v1/sessions", { text: "a new agent" }],
      ] as const) {
        expect((await api(server.url, "POST", path, body)).status, path).toBe(401);
      }
      expect(await store.pendingInbox(id)).toEqual([]);
      expect(await store.planning.getGoal(id)).toBeUndefined();
    });

    it("the plugin cannot be registered without a token: there is no open mode", async () => {
      for (const token of [undefined, ""]) {
        const app = Fastify({ logger: false });
        const options = {
          store,
          config: testConfig(fake.url),
          workspace,
          ...(token === undefined ? {} : { token }),
        } as Parameters<typeof bdshPlugin>[1];
        await expect(app.register(bdshPlugin, options).ready()).rejects.toThrow(/token/);
        await app.close().catch(() => undefined);
      }
    });

    it("the token check compares two HMAC digests of one length whatever is presented (no length leak)", async () => {
      for (const given of [
        "x",
        "y".repeat(server.token.length),
        `${server.token}${"z".repeat(500)}`,
        server.token,
      ]) {
        compared.length = 0;
        const answer = await api(server.url, "GET", "/v1/sessions?limit=1", undefined, {
          authorization: `Bearer ${given}`,
        });
        expect(answer.status).toBe(given === server.token ? 200 : 401);
        expect(compared.length, `compared for a token of ${given.length} characters`).toBeGreaterThan(0);
        for (const [a, b] of compared) expect([a, b]).toEqual([32, 32]);
      }
    });

    it("DNS rebinding: on a loopback connection only localhost, 127.0.0.1 and [::1] are accepted as Host", async () => {
      const { port } = new URL(server.url);
      for (const host of [
        `localhost:${port}`,
        `127.0.0.1:${port}`,
        `[::1]:${port}`,
        "localhost",
        `LOCALHOST:${port}`,
      ]) {
        const answer = await send(server.url, {
          path: "/v1/sessions?limit=1",
          headers: { host, ...server.auth },
        });
        expect(answer.status, host).toBe(200);
      }
      for (const host of [
        `evil.example:${port}`,
        "evil.example",
        `127.0.0.1.evil.example:${port}`,
        `localhost.evil.example:${port}`,
        `localhost@evil.example:${port}`,
        `127.0.0.2:${port}`,
        `[::2]:${port}`,
        `localhost:${port}:1`,
      ]) {
        for (const path of ["/v1/sessions?limit=1", "/healthz", "/v1/no-such-route"]) {
          const answer = await send(server.url, { path, headers: { host, ...server.auth } });
          expect(answer.status, `${host} ${path}`).toBe(403);
          expectError(answer.text, "FORBIDDEN_HOST");
        }
      }
      // HTTP/1.0 may leave Host out: refused too.
      const bare = await rawExchange(server.url, `GET /healthz HTTP/1.0\r\n\r\n`);
      expect(bare.status).toBe(403);
      expectError(bare.text, "FORBIDDEN_HOST");
    });

    it("a host app may add the name of its reverse proxy to the accepted Host names", async () => {
      const extra = await startServer({
        store,
        config: testConfig(fake.url),
        home,
        workspace,
        allowedHosts: ["bdsh.internal"],
        open: () => Promise.reject(new Error("no agents here")),
      });
      try {
        const ok = await send(extra.url, { path: "/healthz", headers: { host: "bdsh.internal:443" } });
        expect(ok.status).toBe(200);
        const refused = await send(extra.url, { path: "/healthz", headers: { host: "other.internal" } });
        expect(refused.status).toBe(403);
      } finally {
        await extra.app.close();
      }
    });

    it("the OpenAPI document describes the bearer scheme and which routes need it", async () => {
      const doc = (await authed("GET", "/v1/openapi.json")).body as {
        security: unknown;
        components: { securitySchemes: { bearer: { type: string; scheme: string; description: string } } };
        paths: Record<string, Record<string, { security: unknown }>>;
      };
      expect(doc.security).toEqual([{ bearer: [] }]);
      expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
      expect(doc.components.securitySchemes.bearer.description).toContain("BDSH_SERVER_TOKEN");
      expect(doc.paths["/v1/sessions/{id}/approvals"]?.post?.security).toEqual([{ bearer: [] }]);
      expect(doc.paths["/healthz"]?.get?.security).toEqual([]);
    });
  });

  describe("finding 7: authentication before the body; ids; one error shape", () => {
    it("a 1 MB body with a wrong token is 401 before the server reads it", async () => {
      const id = await newSession();
      const path = `/v1/sessions/${id}/messages`;
      const head = (authorization: string) =>
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Authorization: ${authorization}\r\nContent-Length: ${BODY_LIMIT}\r\n\r\n`;
      // Headers only, no body byte sent: the answer can only come from a check made before reading.
      const unread = await rawExchange(server.url, head("Bearer wrong"));
      expect(unread.status).toBe(401);
      expectError(unread.text, "UNAUTHORIZED");
      // A whole 1 MB body that is not JSON at all: still 401, never the parser's 400.
      const junk = Buffer.alloc(BODY_LIMIT, "{");
      const unparsed = await rawExchange(server.url, head("Bearer wrong"), junk);
      expect(unparsed.status).toBe(401);
      const valid = JSON.stringify({ text: "x".repeat(BODY_LIMIT - 20) });
      const noToken = await send(server.url, {
        method: "POST",
        path,
        headers: { host: "127.0.0.1", "content-type": "application/json" },
        body: valid,
      });
      expect(noToken.status).toBe(401);
      expect(await store.pendingInbox(id)).toEqual([]);
      // With the token the same broken body is the parser's 400.
      const parsed = await rawExchange(server.url, head(`Bearer ${server.token}`), junk);
      expect(parsed.status).toBe(400);
      expectError(parsed.text, "BAD_REQUEST");
    });

    it("a NUL or another invalid character in an id is 400 on every session route; a well-formed unknown id is 404", async () => {
      const id = await newSession();
      const templates = routes.filter((r) => r.url.includes(":id") && r.method !== "HEAD");
      expect(templates.length).toBeGreaterThanOrEqual(9);
      const bodyOf = (method: string, url: string) =>
        method === "PATCH"
          ? { title: "renamed" }
          : method !== "POST"
            ? undefined
            : url.endsWith("/messages")
              ? { text: "hi" }
              : url.endsWith("/approvals")
                ? { approvalId: "a", decision: "deny" }
                : url.endsWith("/goal")
                  ? { action: "clear" }
                  : url.endsWith("/archive")
                    ? {}
                    : undefined;
      for (const route of templates) {
        for (const bad of [
          "a%00b",
          "%00",
          "a%20b",
          "a%0Ab",
          "%C3%A9",
          "a%2Fb",
          "..",
          "x".repeat(101),
          "%zz",
        ]) {
          const path = route.url.replace(":id", bad);
          const answer = await send(server.url, {
            method: route.method,
            path,
            headers: {
              host: "127.0.0.1",
              ...server.auth,
              ...(bodyOf(route.method, route.url) ? { "content-type": "application/json" } : {}),
            },
            ...(bodyOf(route.method, route.url)
              ? { body: JSON.stringify(bodyOf(route.method, route.url)) }
              : {}),
          });
          expect(answer.status, `${route.method} ${path}`).toBe(400);
          expectError(answer.text, "BAD_REQUEST");
        }
        const unknown = route.url.replace(":id", "0195d3c1-0000-7000-8000-000000000000");
        const answer = await authed(route.method, unknown, bodyOf(route.method, route.url));
        expect(answer.status, `${route.method} ${unknown}`).toBe(404);
        expectError(JSON.stringify(answer.body), "NOT_FOUND");
      }
      const cursor = await authed("GET", "/v1/sessions?before=a%00b");
      expect(cursor.status).toBe(400);
      expect((await authed("GET", `/v1/sessions/${id}`)).status).toBe(200);
    });

    it("a NUL or an unpaired surrogate in any body string (or key) is 400 before the store sees it", async () => {
      const id = await newSession();
      for (const [path, body] of [
        [`/v1/sessions/${id}/messages`, { text: "a\u0000b" }],
        [`/v1/sessions/${id}/messages`, { text: "half \ud800 a pair" }],
        [`/v1/sessions/${id}/messages`, { text: "\udc00" }],
        ["/v1/sessions", { title: "t\u0000" }],
        [`/v1/sessions/${id}/goal`, { action: "create", objective: "x\u0000y" }],
        [`/v1/sessions/${id}/approvals`, { approvalId: "a\u0000", decision: "deny" }],
        [`/v1/sessions/${id}/messages`, { text: "fine", "k\u0000": 1 }],
      ] as const) {
        const answer = await authed("POST", path, body);
        expect(answer.status, JSON.stringify(body)).toBe(400);
        expectError(JSON.stringify(answer.body), "BAD_REQUEST");
      }
      expect(await store.pendingInbox(id)).toEqual([]);
      // A deeply nested body is walked without recursion: a clear 400, not a stack overflow (500).
      const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
      const nested = await send(server.url, {
        method: "POST",
        path: `/v1/sessions/${id}/messages`,
        headers: { host: "127.0.0.1", ...server.auth, "content-type": "application/json" },
        body: deep,
      });
      expect([400, 413]).toContain(nested.status);
      expect(JSON.parse(nested.text).error.code).toMatch(/^(BAD_REQUEST|PAYLOAD_TOO_LARGE)$/);
      // Well-formed text with pairs and controls other than NUL is fine.
      const ok = await authed("POST", `/v1/sessions/${id}/messages`, {
        text: "emoji \ud83d\ude00 tab\t bell\u0007",
      });
      expect(ok.status).toBe(202);
      await store.discardInbox(
        id,
        (await store.pendingInbox(id)).map((p) => p.id),
      );
    });

    it("every refusal has the shape {error:{code,message}}, whichever layer refuses", async () => {
      const id = await newSession();
      const json = { host: "127.0.0.1", ...server.auth, "content-type": "application/json" };
      const bare = { host: "127.0.0.1", ...server.auth };
      const cases: Array<[string, () => Promise<{ status: number; text: string }>, number, string]> = [
        [
          "JSON syntax error",
          () =>
            send(server.url, {
              method: "POST",
              path: `/v1/sessions/${id}/messages`,
              headers: json,
              body: "{not json",
            }),
          400,
          "BAD_REQUEST",
        ],
        [
          "empty body with content-type json",
          () =>
            send(server.url, { method: "POST", path: `/v1/sessions/${id}/cancel`, headers: json, body: "" }),
          400,
          "BAD_REQUEST",
        ],
        [
          "prototype poisoning",
          () =>
            send(server.url, {
              method: "POST",
              path: `/v1/sessions/${id}/messages`,
              headers: json,
              body: '{"text":"x","__proto__":{"admin":true}}',
            }),
          400,
          "BAD_REQUEST",
        ],
        [
          "wrong content type",
          () =>
            send(server.url, {
              method: "POST",
              path: `/v1/sessions/${id}/messages`,
              headers: { ...json, "content-type": "text/plain" },
              body: "hi",
            }),
          415,
          "UNSUPPORTED_MEDIA_TYPE",
        ],
        [
          "form content type",
          () =>
            send(server.url, {
              method: "POST",
              path: `/v1/sessions/${id}/messages`,
              headers: { ...json, "content-type": "application/x-www-form-urlencoded" },
              body: "text=hi",
            }),
          415,
          "UNSUPPORTED_MEDIA_TYPE",
        ],
        [
          "validation",
          () =>
            send(server.url, {
              method: "POST",
              path: `/v1/sessions/${id}/messages`,
              headers: json,
              body: "{}",
            }),
          400,
          "BAD_REQUEST",
        ],
        [
          "query validation",
          () => send(server.url, { path: "/v1/sessions?limit=abc", headers: json }),
          400,
          "BAD_REQUEST",
        ],
        [
          "unknown route",
          () => send(server.url, { path: "/v1/nothing-here", headers: json }),
          404,
          "NOT_FOUND",
        ],
        [
          "unknown route outside /v1",
          () => send(server.url, { path: "/nothing", headers: json }),
          404,
          "NOT_FOUND",
        ],
        [
          "wrong method",
          () => send(server.url, { method: "DELETE", path: `/v1/sessions/${id}`, headers: bare }),
          405,
          "METHOD_NOT_ALLOWED",
        ],
        [
          "wrong method on a collection",
          () => send(server.url, { method: "PUT", path: "/v1/sessions", headers: json, body: "{}" }),
          405,
          "METHOD_NOT_ALLOWED",
        ],
        [
          "too large (declared)",
          () =>
            send(server.url, {
              method: "POST",
              path: `/v1/sessions/${id}/messages`,
              headers: json,
              body: JSON.stringify({ text: "x".repeat(BODY_LIMIT) }),
            }),
          413,
          "PAYLOAD_TOO_LARGE",
        ],
        [
          "too large (chunked, no length)",
          () =>
            rawExchange(
              server.url,
              `POST /v1/sessions/${id}/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\n` +
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
              Buffer.from(`${(BODY_LIMIT + 10).toString(16)}\r\n${"x".repeat(BODY_LIMIT + 10)}\r\n0\r\n\r\n`),
            ),
          413,
          "PAYLOAD_TOO_LARGE",
        ],
        [
          "malformed percent-encoding",
          () => send(server.url, { path: "/v1/sessions/%zz", headers: json }),
          400,
          "BAD_REQUEST",
        ],
        [
          "over-long path segment",
          () => send(server.url, { path: `/v1/sessions/${"a".repeat(300)}`, headers: json }),
          400,
          "BAD_REQUEST",
        ],
        [
          "unauthenticated",
          () => send(server.url, { path: "/v1/sessions", headers: { host: "127.0.0.1" } }),
          401,
          "UNAUTHORIZED",
        ],
        [
          "rebound host",
          () => send(server.url, { path: "/v1/sessions", headers: { ...json, host: "evil.example" } }),
          403,
          "FORBIDDEN_HOST",
        ],
        [
          "malformed Content-Length (Node's parser)",
          () =>
            rawExchange(
              server.url,
              "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n",
            ),
          400,
          "BAD_REQUEST",
        ],
        [
          "not HTTP at all (Node's parser)",
          () => rawExchange(server.url, "HELLO THERE\r\n\r\n"),
          400,
          "BAD_REQUEST",
        ],
        [
          "headers too large (Node's parser)",
          () =>
            rawExchange(
              server.url,
              `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
            ),
          431,
          "HEADERS_TOO_LARGE",
        ],
        [
          "not pending",
          () =>
            send(server.url, {
              method: "POST",
              path: `/v1/sessions/${id}/approvals`,
              headers: json,
              body: JSON.stringify({ approvalId: "nope", decision: "deny" }),
            }),
          404,
          "NOT_PENDING",
        ],
      ];
      for (const [label, answer, status, code] of cases) {
        const { status: got, text } = await answer();
        expect(got, label).toBe(status);
        expectError(text, code);
      }
      const allow = await send(server.url, { method: "DELETE", path: `/v1/sessions/${id}`, headers: bare });
      expect(String(allow.headers.allow).split(", ").sort()).toEqual(["GET", "HEAD", "PATCH"]);
      expect(await store.pendingInbox(id)).toEqual([]);
    });
  });
});

/** Every file under `dir` (following no links) that contains `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      const stat = statSync(path, { throwIfNoEntry: false });
      if (!stat) continue;
      if (stat.isDirectory()) walk(path);
      else if (stat.isFile() && readFileSync(path).includes(needle)) found.push(path);
    }
  };
  walk(dir);
  return found;
}

describe.each(["sqlite", "postgres"] as const)(
  "issue 14 finding 3 end to end on %s: no self-approval through a real `bdsh serve`",
  (kind) => {
    let database: { url?: string; drop: () => Promise<void> };
    let fake: FakeProvider;
    let serve: ServeProcess | undefined;
    let home: string;
    let workspace: string;
    let port = 0;

    /**
     * The hostile model: first a background job that waits for the approval id, then POSTs `allow-once`
     * for it to this server (as finding 3 did, with the session id from its own environment); then the
     * dangerous call itself, which waits for approval while the job runs.
     */
    const attack = [
      "for i in $(seq 1 1200); do [ -s approval-id ] && break; sleep 0.05; done",
      "env > attacker-env.txt",
      'base="http://127.0.0.1:$PORT/v1/sessions/$BDSH_SESSION_ID/approvals"',
      'listed=$(curl -s -o listed.json -w "%{http_code}" "$base")',
      'answered=$(curl -s -o answered.json -w "%{http_code}" -X POST -H "content-type: application/json" ' +
        `-d "{\\"approvalId\\":\\"$(cat approval-id)\\",\\"decision\\":\\"allow-once\\"}" "$base")`,
      'echo "$listed $answered" > attack.done',
    ].join("\n");

    const script = (messages: Message[]) => {
      const done = toolResults(messages).length;
      if (done === 0)
        return {
          toolCalls: [
            {
              id: "job1",
              name: "bash",
              arguments: {
                command: attack.replaceAll("$PORT", String(port)),
                description: "wait",
                run_in_background: true,
              },
            },
          ],
        };
      if (done === 1)
        return {
          toolCalls: [
            { id: "rm1", name: "bash", arguments: { command: "rm -rf victim", description: "clean up" } },
          ],
        };
      return { text: `DONE ${String(toolResults(messages).at(-1)?.content)}` };
    };

    beforeAll(async () => {
      database = await freshDatabase(kind);
      // The workspace is not under BDSH_HOME: the sandbox hides BDSH_HOME, and with it anything inside.
      home = tmpHome(`bdsh-selfapprove-home-${kind}-`).home;
      workspace = tmpHome(`bdsh-selfapprove-ws-${kind}-`).workspace;
      mkdirSync(join(workspace, "victim"));
      writeFileSync(join(workspace, "victim", "keep.txt"), "precious\n");
      fake = await startFakeProvider({
        script: (request) => script((request.body?.messages ?? []) as Message[]),
      });
      const configFile = join(home, "config.yaml");
      writeServeConfig(configFile, { lease_ttl_ms: 5_000, sweep_interval_ms: 500, shutdown_grace_ms: 0 });
      // Commands get the network here, so the second line of defence is what is tested: by default they
      // have none and the curl would not reach the server at all (test/tools/sandbox-network.test.ts).
      appendFileSync(configFile, "sandbox_network: on\n");
      // No BDSH_SERVER_TOKEN: the server makes its own and prints it once on stderr.
      serve = await startServe({
        ...(database.url ? { databaseUrl: database.url } : {}),
        fakeUrl: fake.url,
        home,
        workspace,
        configFile,
        approval: "ask",
      });
      port = Number(new URL(serve.url).port);
    });

    afterAll(async () => {
      if (serve) {
        serve.child.kill("SIGTERM");
        await serve.exited;
      }
      await fake?.close();
      await database?.drop();
    });

    it("a model-run curl POSTing allow-once for its own pending call is refused; the call stays pending and never runs", async () => {
      const running = serve!;
      expect(running.stderr()).toContain(`Authorization: Bearer ${running.token}`);
      const auth = { authorization: `Bearer ${running.token}` };
      const created = await api(running.url, "POST", "/v1/sessions", { text: "tidy the workspace" }, auth);
      expect(created.status).toBe(201);
      const id = String(created.body.id);
      const store = await openStore({ home, ...(database.url ? { databaseUrl: database.url } : {}) });
      try {
        const requested = await waitForEvent(store, id, isType("approval/requested"));
        expect(requested.data.summary).toContain("rm -rf victim");
        // The attacker gets the id it needs for free: the test hands it over through the workspace.
        writeFileSync(join(workspace, "approval-id"), requested.data.id);
        const outcome = join(workspace, "attack.done");
        while (!existsSync(outcome) || readFileSync(outcome, "utf8") === "")
          await new Promise((resolve) => setTimeout(resolve, 50));
        expect(readFileSync(outcome, "utf8").trim()).toBe("401 401");
        expect(JSON.parse(readFileSync(join(workspace, "answered.json"), "utf8"))).toMatchObject({
          error: { code: "UNAUTHORIZED" },
        });

        // Still pending: nothing answered it, nothing ran.
        const pending = await api(running.url, "GET", `/v1/sessions/${id}/approvals`, undefined, auth);
        expect((pending.body.approvals as Array<{ id: string }>).map((a) => a.id)).toEqual([
          requested.data.id,
        ]);
        expect((await store.read(id)).some((e) => e.type === "approval/answered")).toBe(false);
        expect(existsSync(join(workspace, "victim", "keep.txt"))).toBe(true);

        // The token is nowhere a sandboxed command can read: not in its environment, not in a file.
        const childEnv = readFileSync(join(workspace, "attacker-env.txt"), "utf8");
        expect(childEnv).toContain(`BDSH_SESSION_ID=${id}`);
        expect(childEnv).not.toContain(running.token);
        expect(filesContaining(workspace, running.token)).toEqual([]);
        expect(filesContaining(home, running.token)).toEqual([]);

        // The person holding the token denies it; the turn ends without running the command.
        const denied = await api(
          running.url,
          "POST",
          `/v1/sessions/${id}/approvals`,
          { approvalId: requested.data.id, decision: "deny" },
          auth,
        );
        expect(denied.status).toBe(202);
        const end = await waitForEvent(store, id, (e) => e.type === "turn/end");
        const events = await store.read(id);
        expect(end.type).toBe("turn/end");
        expect(events.filter(isType("approval/answered")).map((e) => e.data.decision)).toEqual(["deny"]);
        const result = events.filter(isType("tool/result")).find((e) => e.data.callId === "rm1");
        expect(result?.data.text).toBe('Error: the user rejected tool "bash"');
        expect(existsSync(join(workspace, "victim", "keep.txt"))).toBe(true);
      } finally {
        await store.close();
      }
    });
  },
);

describe("bdsh serve with BDSH_SERVER_TOKEN (issue 14 finding 3)", () => {
  it("takes the configured token, never prints it, and refuses requests without it", async () => {
    const home = tmpHome("bdsh-serve-token-home-").home;
    const workspace = tmpHome("bdsh-serve-token-ws-").workspace;
    const fake = await startFakeProvider({ script: () => ({ text: "ok" }) });
    const configFile = join(home, "config.yaml");
    writeServeConfig(configFile, { shutdown_grace_ms: 0 });
    const token = "configured-token-0123456789abcdef";
    const serve = await startServe({ fakeUrl: fake.url, home, workspace, configFile, token });
    try {
      expect(serve.stderr()).toContain("Authorization: Bearer $BDSH_SERVER_TOKEN");
      expect(serve.stderr()).not.toContain(token);
      expect((await api(serve.url, "GET", "/v1/sessions")).status).toBe(401);
      const auth = { authorization: `Bearer ${token}` };
      expect((await api(serve.url, "GET", "/v1/sessions", undefined, auth)).status).toBe(200);
    } finally {
      serve.child.kill("SIGTERM");
      await serve.exited;
      await fake.close();
    }
  });
});
