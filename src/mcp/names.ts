/**
 * Tool names for MCP tools (T1): `mcp__<server>__<tool>`, within `[A-Za-z0-9_-]{1,64}`.
 *
 * Invariants:
 * - Deterministic: the same server name and the same list of tool names give the same names, in the same
 *   order, in every process (so a resumed session sees the tools it saw before, SP8).
 * - Characters outside the alphabet become `_`; a name longer than 64 is cut and ends in an 8-hex digest
 *   of the full original name; a collision (two tools mapping to one name) is resolved by the same digest,
 *   then a counter, in the server's listing order.
 */
import { createHash } from "node:crypto";

export const MCP_PREFIX = "mcp__";
const MAX = 64;

function clean(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, "_");
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 8);
}

function withSuffix(base: string, suffix: string): string {
  return `${base.slice(0, MAX - suffix.length - 1)}_${suffix}`;
}

/**
 * The model-facing name of each of a server's tools, in the given order. Tools named in `previous` keep
 * their names (a changed list never renames a tool the model already knows, SP8).
 */
export function mcpToolNames(
  server: string,
  tools: readonly string[],
  previous: ReadonlyMap<string, string> = new Map(),
): Map<string, string> {
  const out = new Map<string, string>();
  const taken = new Set<string>(previous.values());
  for (const tool of tools) {
    const known = previous.get(tool);
    if (known !== undefined) {
      out.set(tool, known);
      continue;
    }
    const full = `${MCP_PREFIX}${clean(server)}__${clean(tool)}`;
    let name = full.length <= MAX ? full : withSuffix(full, digest(`${server}/${tool}`));
    if (taken.has(name)) name = withSuffix(full, digest(`${server}/${tool}`));
    for (let n = 2; taken.has(name); n++) name = withSuffix(full, `${digest(`${server}/${tool}`)}${n}`);
    taken.add(name);
    out.set(tool, name);
  }
  return out;
}

/** The toolset of a server's tools in the registry. */
export function mcpToolset(server: string): string {
  return `mcp:${server}`;
}
