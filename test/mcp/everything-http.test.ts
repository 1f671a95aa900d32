/**
 * Issue 18 against the real server-everything over Streamable HTTP, and over the older HTTP+SSE transport
 * (the fallback when a server does not take Streamable HTTP). A canary in `headers` never shows; a server
 * that goes away and comes back is reconnected (T21).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpPool } from "../../src/mcp/pool.js";
import {
  allText,
  freePort,
  gatedSleep,
  ref,
  runSession,
  startHttpEverything,
  toolNamesOf,
  waitForState,
  withDefaults,
} from "./support.js";

const CANARY = "header-canary-51b0e2d4-do-not-leak";
type Server = Awaited<ReturnType<typeof startHttpEverything>>;
let streamable: Server;
let sse: Server;

beforeAll(async () => {
  [streamable, sse] = await Promise.all([startHttpEverything("streamableHttp"), startHttpEverything("sse")]);
});
afterAll(async () => {
  await Promise.all([streamable?.stop(), sse?.stop()]);
});

const calls = {
  toolCalls: [
    { id: "echo", name: "mcp__web__echo", arguments: { message: "over http" } },
    { id: "sum", name: "mcp__web__get-sum", arguments: { a: 1.5, b: 2 } },
    {
      id: "error",
      name: "mcp__web__get-resource-reference",
      arguments: { resourceType: "Text", resourceId: -1 },
    },
    { id: "empty", name: "mcp__web__toggle-simulated-logging", arguments: {} },
    {
      id: "read",
      name: "mcp_read_resource",
      arguments: { server: "web", uri: "demo://resource/dynamic/text/7" },
    },
  ],
};

describe("server-everything over HTTP", () => {
  it("calls its tools over Streamable HTTP with configured headers, which never show", async () => {
    const refused = await freePort();
    const session = await runSession({
      mcp: withDefaults({
        web: { url: streamable.url, headers: { Authorization: `Bearer ${ref("BDSH_MCP_HEADER")}` } },
        down: { url: `http://127.0.0.1:${refused}/mcp`, headers: { "X-Api-Key": ref("BDSH_MCP_HEADER") } },
      }),
      env: { BDSH_MCP_HEADER: CANARY },
      script: [calls, { text: "done" }],
    });
    expect(session.results.get("echo")).toEqual({ text: "Echo: over http" });
    expect(session.results.get("sum")?.text).toContain("3.5");
    expect(session.results.get("error")?.text).toMatch(/^Error: Invalid resourceId: -1/);
    expect(session.results.get("read")?.text).toMatch(/^Resource 7: This is a plaintext resource/);
    expect(session.results.get("empty")?.text).toBeTruthy();
    expect(toolNamesOf(session.fake.requests[0]!).some((n) => n.startsWith("mcp__down__"))).toBe(false);
    expect(session.stderr.filter((l) => l.startsWith("mcp:down:"))).toHaveLength(1);
    expect(allText(session)).not.toContain(CANARY);
  });

  it("falls back to HTTP+SSE for a server that answers the older way", async () => {
    const session = await runSession({
      mcp: withDefaults({ web: { url: sse.url } }),
      script: [{ toolCalls: [calls.toolCalls[0]!] }, { text: "done" }],
    });
    expect(session.stderr).toEqual([]);
    expect(session.results.get("echo")).toEqual({ text: "Echo: over http" });
  });

  it("reconnects to a Streamable HTTP server that went away and came back", async () => {
    let server = await startHttpEverything("streamableHttp");
    const gate = gatedSleep();
    const mcp = withDefaults({ web: { url: server.url } });
    const pool = new McpPool(mcp, { env: {}, cwd: process.cwd(), sleep: gate.sleep });
    const echo = (id: string) => ({
      toolCalls: [{ id, name: "mcp__web__echo", arguments: { message: id } }],
    });
    try {
      const session = await runSession({
        mcp,
        pool,
        prompts: ["first", "second", "third"],
        script: [echo("before"), { text: "a" }, echo("during"), { text: "b" }, echo("after"), { text: "c" }],
        between: async (turn) => {
          if (turn === 0) await server.stop();
          if (turn === 1) {
            server = await startHttpEverything("streamableHttp", server.port);
            gate.open();
            await waitForState(pool.connections.get("web")!, "ready");
          }
        },
      });
      expect(session.results.get("before")).toEqual({ text: "Echo: before" });
      expect(session.results.get("during")?.text).toMatch(
        /^Error: MCP server "web" is unavailable .*reconnecting, attempt 1 of 10/,
      );
      expect(session.results.get("after")).toEqual({ text: "Echo: after" });
    } finally {
      await pool.close();
      await server.stop();
    }
  });
});
