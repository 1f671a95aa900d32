/**
 * `bdsh mcp list` and `bdsh mcp tools NAME` (INTERFACE.md): connect the configured MCP
 * servers (in parallel, each bounded by its `startup_timeout_ms`), report, disconnect.
 *
 * stdout:
 * - `list`: one line per server, `NAME  TRANSPORT  STATE  TOOLS  LAST-ERROR` (`-` when none); `--json`:
 *   `{"servers":[{name, transport, state, tools, resources, lastError?}]}`.
 * - `tools NAME`: one line per tool, `MODEL-NAME  SERVER-TOOL  DESCRIPTION`; `--json`: `{"tools":[…]}`.
 *
 * Exit: 0; 1 when a server in the list did not start; 2 for an unknown NAME or a configuration error.
 * No `env` or `headers` value is ever printed.
 */
import type { Command } from "commander";
import { serverReports, toolReports, withMcpPool } from "../../mcp/report.js";
import { secretRedactor } from "../../presets/open-agent.js";
import { cliEnvironment, type GlobalOptions } from "../environment.js";
import { EXIT_FAILED, EXIT_OK, usageError } from "../errors.js";
import type { Output } from "../output.js";
import { sanitize } from "../render/terminal-text.js";

export function registerMcp(program: Command, output: Output, setExitCode: (code: number) => void): void {
  const mcp = program.command("mcp").description("MCP servers: their state and their tools");
  mcp
    .command("list")
    .description("each configured MCP server: transport, state, tool count, last error")
    .option("--json", "print the servers as JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      const { config } = environment.loaded;
      const reports = await withMcpPool(
        config.mcp_servers,
        { env: environment.env, cwd: environment.cwd, redactor: secretRedactor(environment.env, config) },
        async (pool) => serverReports(pool),
      );
      if (options.json) output.out(JSON.stringify({ servers: reports }));
      else if (reports.length === 0) output.err("no MCP servers configured (config key mcp_servers)");
      else
        for (const r of reports)
          output.out(
            sanitize([r.name, r.transport, r.state, String(r.tools), r.lastError ?? "-"].join("  ")),
          );
      setExitCode(reports.some((r) => r.state !== "ready" && r.state !== "disabled") ? EXIT_FAILED : EXIT_OK);
    });
  mcp
    .command("tools <name>")
    .description("the tools one MCP server offers, by the names the model sees")
    .option("--json", "print the tools as JSON")
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      const { config } = environment.loaded;
      if (!Object.hasOwn(config.mcp_servers, name)) {
        const known = Object.keys(config.mcp_servers);
        throw usageError(
          `no MCP server "${name}" in mcp_servers (configured: ${known.join(", ") || "none"})`,
        );
      }
      const result = await withMcpPool(
        { [name]: config.mcp_servers[name]! },
        { env: environment.env, cwd: environment.cwd, redactor: secretRedactor(environment.env, config) },
        async (pool) => ({ tools: toolReports(pool, name) ?? [], server: serverReports(pool)[0]! }),
      );
      if (result.server.state !== "ready") {
        output.err(
          sanitize(
            `bdsh: MCP server "${name}" is ${result.server.state}: ${result.server.lastError ?? "did not start"}`,
          ),
        );
        setExitCode(EXIT_FAILED);
        return;
      }
      if (options.json) output.out(JSON.stringify({ tools: result.tools }));
      else for (const t of result.tools) output.out(sanitize([t.name, t.tool, t.description].join("  ")));
      setExitCode(EXIT_OK);
    });
}
