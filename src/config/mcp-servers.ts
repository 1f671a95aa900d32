/**
 * The `mcp_servers:` config key (T21): one entry per server, stdio (`command`, `args`, `env`,
 * `cwd`) or Streamable HTTP (`url`, `headers`, with the older HTTP+SSE transport as fallback).
 *
 * Invariants:
 * - An entry is exactly one of the two shapes; a bad entry is a config error naming the key (the loader's
 *   strict schema reports `mcp_servers.<name>.<field>`).
 * - `${VAR}` in `env` and `headers` values expands from the process environment when a connection is made,
 *   never at load time, so the config object never holds a secret. An unset variable expands to "".
 * - Every expanded `env`/`headers` value is a secret: `secretValues` lists them for redaction; they never
 *   appear in logs, events, errors or `doctor` output (the names of the variables may).
 */
import { z } from "zod";

/** T21: 60 s per call. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** How long a server may take to start before a turn stops waiting for it. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 10_000;

/** A server's name becomes part of tool names (`mcp__<server>__<tool>`), so it is kept to the same alphabet. */
export const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const positiveInt = z.number().int().positive();
const stringMap = z.record(z.string(), z.string());
const toolFilter = z
  .strictObject({ include: z.array(z.string()).optional(), exclude: z.array(z.string()).optional() })
  .optional();

/**
 * One flat object, refined to exactly one transport, rather than a union: a union's error would name only
 * `mcp_servers.<name>` and quote the whole entry (literal secrets included); this way the error names the
 * field and quotes only its value.
 */
export const mcpServerSchema = z
  .strictObject({
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: stringMap.optional(),
    cwd: z.string().min(1).optional(),
    url: z.url().optional(),
    headers: stringMap.optional(),
    // No schema defaults: each config layer is parsed on its own, and a default filled in a later layer would
    // overwrite an earlier layer's value when they merge. `serverSettingsFrom` fills them at use.
    enabled: z.boolean().optional(),
    timeout_ms: positiveInt.optional(), // T21: default 60 s
    startup_timeout_ms: positiveInt.optional(),
    tools: toolFilter,
  })
  .superRefine((server, ctx) => {
    if (server.command === undefined && server.url === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["command"],
        message: "a server needs `command` (stdio) or `url` (Streamable HTTP)",
      });
    }
    if (server.command !== undefined && server.url !== undefined) {
      ctx.addIssue({ code: "custom", path: ["url"], message: "give `command` or `url`, not both" });
    }
    if (server.url !== undefined) {
      for (const key of ["args", "env", "cwd"] as const) {
        if (server[key] !== undefined)
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: `\`${key}\` is for stdio servers (\`command\`)`,
          });
      }
    }
    if (server.command !== undefined && server.headers !== undefined) {
      ctx.addIssue({ code: "custom", path: ["headers"], message: "`headers` is for HTTP servers (`url`)" });
    }
  });

export const mcpServersSchema = z.record(
  z.string().regex(SERVER_NAME, "server names are letters, digits, _ and - (at most 64)"),
  mcpServerSchema,
);

export type McpServerConfig = z.infer<typeof mcpServerSchema>;
export type McpServersConfig = z.infer<typeof mcpServersSchema>;

/** An entry with its defaults filled: enabled, 60 s per call (T21), 10 s to start. */
export type McpServerSettings = McpServerConfig & {
  enabled: boolean;
  timeout_ms: number;
  startup_timeout_ms: number;
};

export function serverSettingsFrom(server: McpServerConfig): McpServerSettings {
  return {
    ...server,
    enabled: server.enabled ?? true,
    timeout_ms: server.timeout_ms ?? DEFAULT_CALL_TIMEOUT_MS,
    startup_timeout_ms: server.startup_timeout_ms ?? DEFAULT_STARTUP_TIMEOUT_MS,
  };
}

export function isStdio(server: McpServerConfig): server is McpServerConfig & { command: string } {
  return server.command !== undefined;
}

/** `${VAR}` → the variable's value ("" when unset); `$$` is a literal `$`. */
export function expandVariables(value: string, env: NodeJS.ProcessEnv): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string | undefined) =>
    name === undefined ? "$" : (env[name] ?? ""),
  );
}

export function expandMap(
  map: Readonly<Record<string, string>>,
  env: NodeJS.ProcessEnv,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(map)) out[key] = expandVariables(value, env);
  return out;
}

/** Every value a server's `env` and `headers` expand to (secrets, redacted everywhere). */
export function secretValues(servers: McpServersConfig, env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const server of Object.values(servers)) {
    for (const value of Object.values(expandMap({ ...server.env, ...server.headers }, env))) {
      out.push(value);
      // A header is often `Bearer <token>`: the token alone is redacted as well.
      const last = value.split(/\s+/).at(-1);
      if (last && last !== value) out.push(last);
    }
  }
  return out;
}

/**
 * The variables the servers' `env` and `headers` read (`${VAR}`): secrets handed to one server, so they
 * are kept from every command the model runs, whatever their names are.
 */
export function referencedVariables(servers: McpServersConfig): string[] {
  const names = new Set<string>();
  for (const server of Object.values(servers))
    for (const value of Object.values({ ...server.env, ...server.headers }))
      for (const match of value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) names.add(match[1]!);
  return [...names];
}

/** The tool filter: include (when given) then exclude, by the server's own tool names. */
export function toolAllowed(server: McpServerConfig, tool: string): boolean {
  const include = server.tools?.include;
  if (include && !include.includes(tool)) return false;
  return !(server.tools?.exclude ?? []).includes(tool);
}
