/**
 * What `bdsh mcp list`, `bdsh mcp tools NAME` and `bdsh doctor` say about the configured MCP servers.
 * Each connects the servers once (in parallel, bounded by their startup timeouts) and
 * closes them.
 *
 * Invariants: no `env` or `headers` value is ever printed (the pool's redactor covers every error text);
 * a server that never starts is named with its error, and the others are still reported.
 */

import type { McpServersConfig } from "../config/mcp-servers.js";
import type { Redactor } from "../log/redact.js";
import type { McpState, McpTransportKind } from "./connection.js";
import { mcpToolNames } from "./names.js";
import { McpPool } from "./pool.js";

export type McpServerReport = {
  name: string;
  transport: McpTransportKind | "http";
  state: McpState;
  tools: number;
  resources: boolean;
  lastError?: string;
};

export type McpToolReport = { name: string; tool: string; description: string };

export type InspectOptions = { env: NodeJS.ProcessEnv; cwd: string; redactor?: Redactor };

/** Connects every configured server, runs `use`, closes them. */
export async function withMcpPool<T>(
  servers: McpServersConfig,
  options: InspectOptions,
  use: (pool: McpPool) => Promise<T>,
): Promise<T> {
  const pool = new McpPool(servers, {
    env: options.env,
    cwd: options.cwd,
    ...(options.redactor ? { redactor: options.redactor } : {}),
  });
  try {
    await pool.ready();
    return await use(pool);
  } finally {
    await pool.close();
  }
}

export function serverReports(pool: McpPool): McpServerReport[] {
  return [...pool.connections.values()].map((c) => ({
    name: c.name,
    transport: c.transportInUse,
    state: c.state,
    tools: c.tools.length,
    resources: c.state === "ready" && c.offersResources,
    ...(c.lastError ? { lastError: c.lastError } : {}),
  }));
}

export function toolReports(pool: McpPool, server: string): McpToolReport[] | undefined {
  const connection = pool.connections.get(server);
  if (!connection) return undefined;
  const names = mcpToolNames(
    server,
    connection.tools.map((t) => t.name),
  );
  return connection.tools.map((t) => ({
    name: names.get(t.name)!,
    tool: t.name,
    description: pool.redactor.text((t.description ?? t.title ?? "").replace(/\s+/g, " ").trim()),
  }));
}

/** One doctor line per server. Disabled: ok; ready: ok; anything else: fail (the user asked for it). */
export function doctorChecks(
  reports: readonly McpServerReport[],
): { status: "ok" | "warn" | "fail"; name: string; detail: string }[] {
  return reports.map((r) => {
    const name = `mcp:${r.name}`;
    if (r.state === "disabled") return { status: "ok", name, detail: `${r.transport}, disabled` };
    if (r.state === "ready")
      return {
        status: "ok",
        name,
        detail: `${r.transport}, ready, ${r.tools} tool${r.tools === 1 ? "" : "s"}${r.resources ? ", resources" : ""}`,
      };
    return {
      status: "fail",
      name,
      detail: `${r.transport}, ${r.state}: ${r.lastError ?? "did not start"}; its tools are not offered`,
    };
  });
}

/** `bdsh doctor`: one check per configured server (none when `mcp_servers` is empty). */
export async function mcpDoctorChecks(
  servers: McpServersConfig,
  options: InspectOptions,
): Promise<{ status: "ok" | "warn" | "fail"; name: string; detail: string }[]> {
  if (Object.keys(servers).length === 0) return [];
  return doctorChecks(await withMcpPool(servers, options, async (pool) => serverReports(pool)));
}
