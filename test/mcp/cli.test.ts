/**
 * Issue 18 through the real CLI: `bdsh mcp list`, `bdsh mcp tools NAME` and `bdsh doctor` report each
 * configured server (a server that never starts is named, the others still work), a canary in `env` is
 * printed nowhere, and bad `mcp_servers` entries are config errors naming the key (exit 2).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/program.js";
import { runCli } from "../support/run-cli.js";
import { EVERYTHING, ref } from "./support.js";

const CANARY = "cli-canary-90c4d1e7-do-not-leak";

function homeWith(mcpServers: unknown): { env: NodeJS.ProcessEnv; cwd: string } {
  const root = mkdtempSync(join(tmpdir(), "bdsh-mcp-cli-"));
  const home = join(root, "home");
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "config.yaml"), JSON.stringify({ mcp_servers: mcpServers }));
  return { env: { BDSH_HOME: home, BDSH_MCP_CANARY: CANARY }, cwd: root };
}

const saved = { ...process.env };
afterEach(() => {
  for (const key of ["BDSH_HOME", "BDSH_MCP_CANARY"]) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

/** `bdsh ARGS` in this process (the spawned binary is exercised once, by `mcp list`). */
async function bdsh(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  Object.assign(process.env, env);
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await main(["--cwd", cwd, ...args], {
    out: (line) => stdout.push(line),
    err: (line) => stderr.push(line),
  });
  return { code, stdout: stdout.join("\n"), stderr: stderr.join("\n") };
}

const configured = {
  everything: {
    command: process.execPath,
    args: [EVERYTHING, "stdio"],
    env: { TOKEN: ref("BDSH_MCP_CANARY") },
  },
  broken: { command: "/nonexistent/bdsh-mcp-server", env: { TOKEN: ref("BDSH_MCP_CANARY") } },
  leaky: {
    command: process.execPath,
    args: ["-e", "console.error('token ' + process.env.TOKEN); process.exit(3)"],
    env: { TOKEN: ref("BDSH_MCP_CANARY") },
  },
  off: { command: "/nonexistent/never-started", enabled: false },
};

describe("bdsh mcp and doctor", () => {
  it("lists each server's transport, state, tool count and last error, and a server's tools", async () => {
    const { env, cwd } = homeWith(configured);
    const [list, tools, doctor] = await Promise.all([
      runCli(["mcp", "list"], env, cwd),
      bdsh(["mcp", "tools", "everything", "--json"], env, cwd),
      bdsh(["doctor", "--json"], env, cwd),
    ]);
    expect(list.code).toBe(1); // a configured server did not start
    const lines = list.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^everything {2}stdio {2}ready {2}\d+ {2}-$/);
    expect(lines[1]).toMatch(/^broken {2}stdio {2}failed {2}0 {2}.*ENOENT/);
    expect(lines[2]).toMatch(/^leaky {2}stdio {2}failed {2}0 {2}.*token \[REDACTED\]/);
    expect(lines[3]).toBe("off  stdio  disabled  0  -");

    expect(tools.code).toBe(0);
    const listed = (JSON.parse(tools.stdout) as { tools: Array<{ name: string; tool: string }> }).tools;
    expect(listed).toContainEqual(expect.objectContaining({ name: "mcp__everything__echo", tool: "echo" }));

    expect(doctor.code).toBe(1);
    const checks = (
      JSON.parse(doctor.stdout) as { checks: Array<{ status: string; name: string; detail: string }> }
    ).checks;
    expect(checks.find((c) => c.name === "mcp:everything")).toMatchObject({ status: "ok" });
    expect(checks.find((c) => c.name === "mcp:everything")?.detail).toMatch(
      /^stdio, ready, \d+ tools, resources$/,
    );
    expect(checks.find((c) => c.name === "mcp:broken")).toMatchObject({ status: "fail" });
    expect(checks.find((c) => c.name === "mcp:broken")?.detail).toContain("its tools are not offered");
    expect(checks.find((c) => c.name === "mcp:off")).toMatchObject({
      status: "ok",
      detail: "stdio, disabled",
    });

    for (const result of [list, tools, doctor]) expect(result.stdout + result.stderr).not.toContain(CANARY);
  });

  it("rejects bad entries as config errors naming the key, and an unknown server as a usage error", async () => {
    const cases = [
      { servers: { x: { command: 5 } }, key: "mcp_servers.x.command: expected string" },
      { servers: { x: {} }, key: "mcp_servers.x.command: a server needs `command` (stdio) or `url`" },
      {
        servers: { x: { command: "a", url: "http://127.0.0.1:1/mcp" } },
        key: "mcp_servers.x.url: give `command` or `url`, not both",
      },
      { servers: { x: { command: "a", timeout_ms: 0 } }, key: "mcp_servers.x.timeout_ms" },
      { servers: { x: { command: "a", tols: {} } }, key: "mcp_servers.x.tols: unknown key" },
      { servers: { "bad name": { command: "a" } }, key: "mcp_servers.bad name" },
    ];
    const results = [];
    for (const { servers } of cases) {
      const { env, cwd } = homeWith(servers);
      results.push(await bdsh(["mcp", "list"], env, cwd));
    }
    for (const [i, result] of results.entries()) {
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("bdsh: CONFIG: ");
      expect(result.stderr).toContain(cases[i]!.key);
    }
    const { env, cwd } = homeWith({ off: { command: "a", enabled: false } });
    const unknown = await bdsh(["mcp", "tools", "nope"], env, cwd);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no MCP server "nope" in mcp_servers (configured: off)');
  });
});
