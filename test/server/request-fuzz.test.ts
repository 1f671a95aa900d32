/**
 * No request can take `bdsh serve` down, and every refusal is a 4xx in the API's one error shape
 * (`{error: {code, message}}`, SECURITY.md 7c):
 * - a real `bdsh serve` process given a malformed `%`-escape in the speech WebSocket's session id answers
 *   400 and keeps serving (that request once ended the process with `URI malformed`);
 * - every route the server documents, the dashboard's and the speech upgrade are fuzzed with malformed
 *   paths, escapes, queries, methods, headers and bodies against a real in-process server on both stores;
 *   no answer is a 5xx, no connection closes without an answer, and `/healthz` answers after.
 */
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type ServeProcess, startServe, writeServeConfig } from "../chaos/serve-process.js";
import { freshPostgresDatabase } from "../support/fresh-database.js";
import { startScenarioProvider, startServer, type TestServer, testConfig, tmpHome } from "./harness.js";
import { type RawAnswer, rawExchange } from "./raw-http.js";

const WS_KEY = "dGhlIHNhbXBsZSBub25jZQ==";

/** The documented error shape, exactly. */
function isErrorShape(text: string): boolean {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const keys = Object.keys(body);
    return (
      keys.length === 1 &&
      typeof body.error?.code === "string" &&
      typeof body.error.message === "string" &&
      Object.keys(body.error).length === 2
    );
  } catch {
    return false;
  }
}

/** What every answer must be: a success, or a 4xx in the error shape (a HEAD answer has no body). */
function expectNoServerError(answer: RawAnswer, method: string, request: string): void {
  const what = `${request.slice(0, 300)}\n→ ${answer.head}\n${answer.text.slice(0, 300)}`;
  expect(answer.status, what).toBeGreaterThanOrEqual(100);
  expect(answer.status, what).toBeLessThan(500);
  if (answer.status >= 400 && method !== "HEAD") expect(isErrorShape(answer.text), what).toBe(true);
}

function upgradeRequest(path: string, headers: string[]): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers.map((h) => `${h}\r\n`).join("")}\r\n`;
}

describe("a malformed escape in the speech WebSocket's path (a real bdsh serve)", () => {
  let serve: ServeProcess | undefined;
  afterAll(() => {
    serve?.child.kill("SIGKILL");
  });

  it("is a 400 in the error shape, and the process keeps serving", async () => {
    const { home, workspace } = tmpHome("bdsh-fuzz-serve-");
    const fake = (await startScenarioProvider()).fake;
    const configFile = join(home, "serve.yaml");
    writeServeConfig(configFile, { sweep_interval_ms: 500 });
    serve = await startServe({ fakeUrl: fake.url, home, workspace, configFile });
    const auth = `Authorization: Bearer ${serve.token}`;
    const wsHeaders = ["Upgrade: websocket", "Connection: Upgrade", `Sec-WebSocket-Key: ${WS_KEY}`];
    for (const id of ["%E0%A4%A", "%", "%ff", "abc%zz"]) {
      const request = upgradeRequest(`/v1/sessions/${id}/speech`, [
        ...wsHeaders,
        "Sec-WebSocket-Version: 13",
        auth,
      ]);
      const answer = await rawExchange(serve.url, request);
      expect(answer.status, answer.head).toBe(400);
      expect(JSON.parse(answer.text)).toEqual({
        error: { code: "BAD_REQUEST", message: expect.stringContaining("percent-encoding") },
      });
    }
    const health = await fetch(`${serve.url}/healthz`, { headers: { host: "127.0.0.1" } });
    expect(health.status).toBe(200);
    expect(serve.child.exitCode).toBeNull();
    await fake.close();
  });
});

describe.each(["sqlite", "postgres"] as const)("every route and upgrade, fuzzed (%s)", (kind) => {
  let store: Store;
  let server: TestServer;
  let drop: () => Promise<void> = async () => undefined;
  let closeFake: () => Promise<void> = async () => undefined;
  let sessionId = "";
  let routes: Array<{ method: string; path: string }> = [];

  beforeAll(async () => {
    const { home, workspace } = tmpHome("bdsh-fuzz-");
    const { fake } = await startScenarioProvider();
    closeFake = () => fake.close();
    let databaseUrl: string | undefined;
    if (kind === "postgres") {
      const fresh = await freshPostgresDatabase("fuzz");
      databaseUrl = fresh.url;
      drop = fresh.drop;
    }
    store = await openStore({ home, ...(databaseUrl ? { databaseUrl } : {}) });
    server = await startServer({ store, config: testConfig(fake.url), home, workspace });
    sessionId = (await store.createSession({ metadata: { workspace } })).id;
    const document = (await (
      await fetch(`${server.url}/v1/openapi.json`, { headers: server.auth })
    ).json()) as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path })),
    );
    routes.push({ method: "GET", path: "/" }, { method: "GET", path: "/assets/{name}" });
    expect(routes.length).toBeGreaterThan(15);
  });

  afterAll(async () => {
    await server?.app.close();
    await store?.close();
    await closeFake();
    await drop();
  });

  /** A path segment: a real id, a malformed or hostile escape, or arbitrary text encoded byte by byte. */
  const segment = () =>
    fc.oneof(
      fc.constant(sessionId),
      fc.constantFrom(
        "%",
        "%E0%A4%A",
        "%zz",
        "%00",
        "%ED%A0%80",
        "%C0%AF",
        "%FF%FE",
        "..",
        "%2e%2e",
        "%2F",
        "a%",
        "%%",
        "%u0041",
        "x".repeat(700),
        `${sessionId}%00`,
      ),
      fc.string({ unit: "binary", maxLength: 24 }).map(encodeBytes),
      fc.stringMatching(/^[A-Za-z0-9%._~-]{0,40}$/),
    );

  const query = fc.oneof(
    fc.constant(""),
    fc.constantFrom(
      "?after=%",
      "?after=-1",
      "?after=abc",
      "?after=1e99",
      "?=",
      "?%%",
      "?cursor=%ff&limit=-5",
    ),
    fc
      .string({ unit: "binary", maxLength: 24 })
      .map((s) => `?after=${encodeBytes(s)}&workspace=${encodeBytes(s)}`),
  );

  const body = fc.oneof(
    fc.constant(""),
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
    fc.string({ unit: "binary", maxLength: 64 }),
    fc.constantFrom(
      '{"text":"hi"}',
      '{"text":"hi","mode":"steer"}',
      '{"text":"hi","mdoe":"steer"}',
      '{"text":"\\u0000"}',
      '{"text":"\\ud800"}',
      '{"\\ud800":1}',
      '{"handle":"x"}',
      '{"handle":{"a":[1,2]}}',
      '{"id":"x","answer":"allow-once"}',
      '{"objective":"x"}',
      "null",
      "[]",
      "{",
      `${"[".repeat(20_000)}${"]".repeat(20_000)}`,
      `{"text":${"[".repeat(20_000)}${"]".repeat(20_000)}}`,
    ),
  );

  const header = fc.constantFrom(
    "Accept: */*",
    "Last-Event-ID: %%",
    "Last-Event-ID: -1",
    "Last-Event-ID: 99999999999999999999",
    "Content-Length: abc",
    "Content-Length: -1",
    "X-\u0001Bad: y",
    "Bad Header Line",
    "Transfer-Encoding: gzip",
    "Connection: keep-alive",
    "Accept-Encoding: gzip, br, *;q=0",
    "If-None-Match: *",
    "Range: bytes=5-1",
  );

  it("every documented route answers malformed requests with a 4xx in the error shape", async () => {
    const method = fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD");
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          route: fc.constantFrom(...routes),
          method: fc.oneof(method, fc.constant("")),
          ids: fc.array(segment(), { minLength: 2, maxLength: 2 }),
          extraSegment: fc.option(segment(), { nil: undefined }),
          query,
          auth: fc.constantFrom("good", "good", "good", "none", "wrong", "long"),
          contentType: fc.constantFrom(
            "application/json",
            "application/json",
            "text/plain",
            "application/json; charset=latin1",
            "application/x-www-form-urlencoded",
            "",
            "application/json;;;",
            undefined,
          ),
          headers: fc.array(header, { maxLength: 2 }),
          host: fc.constantFrom("127.0.0.1", "127.0.0.1", "127.0.0.1", "evil.example", "", undefined),
          body,
        }),
        async (input) => {
          const method = input.method || input.route.method;
          let index = 0;
          let path = input.route.path.replace(/\{[A-Za-z]+\}/g, () => input.ids[index++ % 2]!);
          if (input.extraSegment !== undefined) path += `/${input.extraSegment}`;
          const token =
            input.auth === "good"
              ? server.token
              : input.auth === "wrong"
                ? "wrong-token"
                : input.auth === "long"
                  ? "x".repeat(5000)
                  : undefined;
          const bytes = Buffer.from(input.body, "utf8");
          const lines = [
            `${method} ${path}${input.query} HTTP/1.1`,
            ...(input.host === undefined ? [] : [`Host: ${input.host}`]),
            ...(token === undefined ? [] : [`Authorization: Bearer ${token}`]),
            ...(input.contentType === undefined ? [] : [`Content-Type: ${input.contentType}`]),
            ...input.headers,
            ...(input.headers.some((h) => h.startsWith("Content-Length"))
              ? []
              : [`Content-Length: ${bytes.length}`]),
            "Connection: close",
          ];
          const head = `${lines.join("\r\n")}\r\n\r\n`;
          const answer = await rawExchange(server.url, Buffer.concat([Buffer.from(head, "utf8"), bytes]), {
            headOnly: method === "HEAD",
          });
          expectNoServerError(answer, method, head);
        },
      ),
      { numRuns: 250 },
    );
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("the event stream answers HEAD with its head at once, and a cursor no seq can reach with a 400", async () => {
    // Found by the fuzz above: HEAD never got its head (Node holds it back until a HEAD response ends), and
    // ?after=1e99 passed the schema as an integer that PostgreSQL's bigint refuses.
    for (const query of ["", "?after=0", "?after=5"]) {
      const head = `HEAD /v1/sessions/${sessionId}/events${query} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\nConnection: close\r\n\r\n`;
      const answer = await rawExchange(server.url, head, { headOnly: true });
      expect(answer.status, query).toBe(200);
      expect(answer.head).toMatch(/content-type: text\/event-stream/i);
    }
    for (const query of ["?after=1e99", `?after=${2 ** 53}`]) {
      const answer = await fetch(`${server.url}/v1/sessions/${sessionId}/events${query}`, {
        headers: server.auth,
      });
      expect(answer.status, query).toBe(400);
      expect(isErrorShape(await answer.text())).toBe(true);
    }
    const lastEventId = await fetch(`${server.url}/v1/sessions/${sessionId}/events`, {
      headers: { ...server.auth, "last-event-id": "1e99" },
    });
    expect(lastEventId.status).toBe(400);
  });

  it("the speech upgrade answers malformed paths, escapes and handshakes with a 4xx in the error shape", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          id: segment(),
          prefix: fc.constantFrom("/v1/sessions/", "/v1/sessions//", "/v1/session/", "/"),
          suffix: fc.constantFrom("/speech", "/speech?x=%", "/speech/", "/speech%00", ""),
          method: fc.constantFrom("GET", "GET", "GET", "POST", "DELETE"),
          auth: fc.constantFrom("header", "header", "protocol", "bad-protocol", "none"),
          upgrade: fc.constantFrom("websocket", "WebSocket", "h2c", ""),
          key: fc.constantFrom(WS_KEY, WS_KEY, "short", ""),
          version: fc.constantFrom("13", "13", "8", "99", ""),
          protocol: fc.constantFrom(undefined, "bdsh", "bdsh, ,", "bdsh,,bdsh", "b d s h", "bdsh.bearer.%%%"),
          extensions: fc.constantFrom(undefined, "permessage-deflate; x=", ";;;"),
          host: fc.constantFrom("127.0.0.1", "127.0.0.1", "evil.example", ""),
        }),
        async (input) => {
          const path = `${input.prefix}${input.id}${input.suffix}`;
          const protocols = [
            ...(input.protocol === undefined ? [] : [input.protocol]),
            ...(input.auth === "protocol"
              ? ["bdsh", `bdsh.bearer.${Buffer.from(server.token).toString("base64url")}`]
              : input.auth === "bad-protocol"
                ? ["bdsh.bearer.!!!"]
                : []),
          ];
          const lines = [
            `${input.method} ${path} HTTP/1.1`,
            ...(input.host ? [`Host: ${input.host}`] : []),
            `Upgrade: ${input.upgrade}`,
            "Connection: Upgrade",
            ...(input.key ? [`Sec-WebSocket-Key: ${input.key}`] : []),
            ...(input.version ? [`Sec-WebSocket-Version: ${input.version}`] : []),
            ...(protocols.length ? [`Sec-WebSocket-Protocol: ${protocols.join(", ")}`] : []),
            ...(input.extensions === undefined ? [] : [`Sec-WebSocket-Extensions: ${input.extensions}`]),
            ...(input.auth === "header" ? [`Authorization: Bearer ${server.token}`] : []),
          ];
          const head = `${lines.join("\r\n")}\r\n\r\n`;
          const answer = await rawExchange(server.url, head);
          expectNoServerError(answer, input.method, head);
        },
      ),
      { numRuns: 250 },
    );
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

/** Text percent-encoded byte by byte, as a client would put it in a URL (lone surrogates as U+FFFD). */
function encodeBytes(text: string): string {
  return [...Buffer.from(text, "utf8")]
    .map((byte) =>
      /[A-Za-z0-9._~-]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");
}
