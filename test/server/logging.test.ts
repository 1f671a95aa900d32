/**
 * Issue 37 item 3: the server's logs are JSON lines from Fastify's own logger, with a level name, the
 * request id (the caller's `x-request-id` when safe, echoed on the response) and the session id on session
 * routes, every line through the redactor; on a terminal, the same records in a human format.
 */
import { rmSync } from "node:fs";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { Redactor } from "../../src/log/redact.js";
import { humanLine, serverLogging } from "../../src/server/logging.js";
import { bdshPlugin, bdshServerOptions } from "../../src/server/plugin.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { testAgentEnv } from "../support/test-agent.js";
import { tmpHome } from "./harness.js";

const CANARY = "tok-canary-91d2e7a04c";
const lines: string[] = [];
let store: Store;
let dirs: ReturnType<typeof tmpHome>;
let app: ReturnType<typeof Fastify>;

beforeAll(async () => {
  dirs = tmpHome("bdsh-logging-");
  store = await openStore({ home: dirs.home });
  app = Fastify({
    ...bdshServerOptions(),
    ...serverLogging({
      level: "info",
      redactor: Redactor.of([CANARY]),
      destination: { write: (line: string) => lines.push(line) },
    }),
  });
  await app.register(bdshPlugin, {
    store,
    config: DEFAULT_CONFIG,
    home: dirs.home,
    workspace: dirs.workspace,
    env: testAgentEnv(),
    token: "logging-test-token",
    dashboard: false,
  });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await store?.close();
  rmSync(dirs.home, { recursive: true, force: true });
});

const records = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe("structured server logs (issue 37 item 3)", () => {
  it("writes JSON lines with the level, the caller's request id and the session id", async () => {
    const response = await app.inject({
      method: "GET",
      url: "/v1/sessions/no-such-session/approvals",
      headers: { host: "127.0.0.1", authorization: "Bearer logging-test-token", "x-request-id": "req-abc.1" },
    });
    expect(response.statusCode).toBe(404);
    expect(response.headers["x-request-id"]).toBe("req-abc.1");
    const mine = records().filter((r) => r.reqId === "req-abc.1");
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((r) => r.level === "info" && typeof r.time === "number")).toBe(true);
    expect(mine.some((r) => r.sessionId === "no-such-session")).toBe(true);
  });

  it("replaces an unsafe request id with a new one", async () => {
    const response = await app.inject({
      method: "GET",
      url: "/healthz",
      headers: { host: "127.0.0.1", "x-request-id": "bad id\nforged: line" },
    });
    expect(response.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("passes every line through the redactor", () => {
    app.log.warn({ detail: `the key is ${CANARY}` }, `failed with ${CANARY}`);
    const last = records().at(-1)!;
    expect(last).toMatchObject({
      level: "warn",
      msg: "failed with [REDACTED]",
      detail: "the key is [REDACTED]",
    });
    expect(lines.join("")).not.toContain(CANARY);
  });

  it("prints a record in a human format on a terminal", () => {
    const line = humanLine(
      `${JSON.stringify({ level: "warn", time: Date.UTC(2026, 0, 2, 3, 4, 5), reqId: "r1", msg: "slow", ms: 12 })}\n`,
    );
    expect(line).toBe("03:04:05 WARN  [r1] slow ms=12\n");
  });
});
