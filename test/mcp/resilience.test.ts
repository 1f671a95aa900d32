/**
 * Issue 18 acceptance: a stdio server killed mid-session (the next call reports the outage, the reconnect
 * happens with T21's back-off, a later call succeeds, and the tool list never changes, SP8); servers that
 * never start (missing command, silent process, crash) leave the others working and are reported once; a
 * canary secret passed through `env` appears nowhere in events, requests or reports.
 */
import { describe, expect, it } from "vitest";
import { backoffDelays } from "../../src/mcp/connection.js";
import { McpPool } from "../../src/mcp/pool.js";
import {
  allText,
  EVERYTHING,
  gatedSleep,
  ref,
  runSession,
  stdio,
  toolNamesOf,
  waitForState,
  withDefaults,
} from "./support.js";

const CANARY = "canary-7f3a9c21-do-not-leak";

describe("MCP connections", () => {
  it("reports a killed stdio server's outage, reconnects with back-off, and calls it again", async () => {
    const gate = gatedSleep();
    const mcp = withDefaults({ everything: stdio(EVERYTHING, ["stdio"]) });
    const pool = new McpPool(mcp, { env: {}, cwd: process.cwd(), sleep: gate.sleep });
    const echo = (id: string) => ({
      toolCalls: [{ id, name: "mcp__everything__echo", arguments: { message: id } }],
    });
    try {
      const session = await runSession({
        mcp,
        pool,
        prompts: ["first", "second", "third"],
        script: [echo("before"), { text: "a" }, echo("during"), { text: "b" }, echo("after"), { text: "c" }],
        between: async (turn) => {
          const connection = pool.connections.get("everything")!;
          if (turn === 0) {
            process.kill(connection.pid!, "SIGKILL");
            await waitForState(connection, "reconnecting");
          }
          if (turn === 1) {
            gate.open();
            await waitForState(connection, "ready");
          }
        },
      });
      expect(session.results.get("before")).toEqual({ text: "Echo: before" });
      const during = session.results.get("during")!;
      expect(during.isError).toBe(true);
      expect(during.text).toMatch(
        /^Error: MCP server "everything" is unavailable \(.*\); reconnecting, attempt 1 of 10\./,
      );
      expect(session.results.get("after")).toEqual({ text: "Echo: after" });
      expect(gate.delays[0]).toBe(500);
      // SP8: the same tools were declared on every request, the outage included.
      const lists = session.fake.requests.map((r) => JSON.stringify(toolNamesOf(r)));
      expect(new Set(lists).size).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it("backs off from 500 ms doubling to 30 s, 10 attempts (T21)", () => {
    expect(backoffDelays()).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000]);
  });

  it("skips servers that never start, reports each once, and the others work; env secrets never show", async () => {
    const session = await runSession({
      mcp: withDefaults({
        missing: { command: "/nonexistent/bdsh-mcp-server" },
        silent: {
          command: process.execPath,
          args: ["-e", "process.stdin.on('data', () => {})"],
          startup_timeout_ms: 400,
        },
        leaky: {
          command: process.execPath,
          args: ["-e", "console.error('token=' + process.env.LEAK); process.exit(3)"],
          env: { LEAK: ref("BDSH_MCP_CANARY") },
        },
        everything: stdio(EVERYTHING, ["stdio"], { env: { CANARY_TOKEN: ref("BDSH_MCP_CANARY") } }),
      }),
      env: { BDSH_MCP_CANARY: CANARY },
      script: [
        {
          toolCalls: [
            { id: "echo", name: "mcp__everything__echo", arguments: { message: "works" } },
            { id: "env", name: "mcp__everything__get-env", arguments: {} },
          ],
        },
        { text: "done" },
      ],
    });
    expect(session.results.get("echo")).toEqual({ text: "Echo: works" });
    const names = toolNamesOf(session.fake.requests[0]!);
    expect(names.some((n) => /^mcp__(missing|silent|leaky)__/.test(n))).toBe(false);
    for (const server of ["missing", "silent", "leaky"])
      expect(session.stderr.filter((line) => line.startsWith(`mcp:${server}:`))).toHaveLength(1);
    expect(session.stderr.find((l) => l.startsWith("mcp:missing:"))).toContain("ENOENT");
    expect(session.stderr.find((l) => l.startsWith("mcp:leaky:"))).toContain("token=[REDACTED]");
    // The server printed its environment: the configured value reached it, and was redacted on the way back.
    const env = session.results.get("env")!.text;
    expect(env).toContain('"CANARY_TOKEN": "[REDACTED]"');
    expect(env).not.toContain("DEEPSEEK_API_KEY"); // the harness's key never reaches a server
    expect(allText(session)).not.toContain(CANARY);
  });
});
