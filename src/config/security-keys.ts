/**
 * Keys a project's own `./.bdsh/config.yaml` may never loosen. Only the user's config,
 * `--config`, the environment and flags can: a model that writes the workspace must not be able to raise
 * its own privileges on the next run.
 *
 * Invariants:
 * - An ordered key (sandbox, approval, a boolean switch, a limit) may be set to the value it already has
 *   or a tighter one; anything else, and any change to an unordered key (provider, base URL, allowlists,
 *   plugin overrides, terminal backend and its environment lists, MCP servers, the auto-reviewer), is
 *   dropped from the project layer with a warning naming the key and the file. It is never an error: a
 *   hostile file must not be able to stop the user's next run either.
 * - The comparison is against the configuration merged so far (defaults and the user's file), so a tighter
 *   user setting stays tight.
 */
import { isDeepStrictEqual } from "node:util";

type Rule = { key: string; mayApply: (project: unknown, current: unknown) => boolean };

const rank =
  (order: readonly string[]) =>
  (project: unknown, current: unknown): boolean => {
    const p = order.indexOf(String(project));
    const c = order.indexOf(String(current));
    return p !== -1 && c !== -1 && p <= c;
  };

const unchanged = (project: unknown, current: unknown) => isDeepStrictEqual(project, current);

const never = () => false;

/** A limit: the same or lower. */
const atMost = (project: unknown, current: unknown) =>
  typeof project === "number" && typeof current === "number" && project <= current;

const RULES: readonly Rule[] = [
  { key: "sandbox", mayApply: rank(["read-only", "workspace-write", "danger-full-access"]) },
  // `never` refuses everything that needs approval; `auto` lets a model approve (S7).
  { key: "approval", mayApply: rank(["never", "ask", "auto"]) },
  { key: "sandbox_required", mayApply: (p, c) => p === true || p === c },
  // What a command may reach is the user's call alone: a project may not set it at all, not even tighter,
  // so a cloned repository can neither open the network nor widen the proxy's list.
  { key: "sandbox_network", mayApply: never },
  { key: "sandbox_proxy_allow", mayApply: never },
  { key: "web_fetch.allow_private", mayApply: (p, c) => p === false || p === c },
  { key: "tools.bash.max_command_bytes", mayApply: atMost },
  // What a turn and a session may spend is the user's to raise: a project may only lower it.
  { key: "loop.max_steps_per_turn", mayApply: atMost },
  { key: "budget.max_tokens", mayApply: (p, c) => atMost(p, c ?? Number.POSITIVE_INFINITY) },
  { key: "budget.max_cost_usd", mayApply: (p, c) => atMost(p, c ?? Number.POSITIVE_INFINITY) },
  { key: "command_allowlist", mayApply: unchanged },
  { key: "model.provider", mayApply: unchanged },
  { key: "model.base_url", mayApply: unchanged },
  { key: "plugins", mayApply: unchanged },
  { key: "terminal.backend", mayApply: unchanged },
  { key: "terminal.strip_env_keys", mayApply: unchanged },
  { key: "terminal.pass_env_keys", mayApply: unchanged },
  // A project must not point commands at another host or container, or turn host-key checks off.
  { key: "terminal.ssh", mayApply: unchanged },
  { key: "terminal.docker", mayApply: unchanged },
  { key: "terminal.container_persistent", mayApply: unchanged },
  { key: "auto_review", mayApply: unchanged },
  { key: "mcp_servers", mayApply: unchanged },
  // A provider's endpoint and key live here; a project pointing `tts.<provider>.base_url` elsewhere
  // would have the user's speech key sent to that host.
  { key: "tts", mayApply: unchanged },
  // T19: the same for web search: a project naming a provider or an endpoint would send the user's search
  // key (and the model's queries) where it chose.
  { key: "web_search", mayApply: unchanged },
  // Prompts leaving the process in traces, and metrics without the token, are the user's call.
  { key: "telemetry.capture_content", mayApply: (p, c) => p === false || p === c },
  { key: "server.metrics_public", mayApply: (p, c) => p === false || p === c },
  // How durable a turn is and how many connections a process opens to a PostgreSQL shared by a fleet are
  // the operator's: a project turning fsync off would lose what a crash should keep, and one raising the
  // pool could take every connection the database allows from the other servers.
  { key: "store", mayApply: unchanged },
  // What the listen queue holds is sized for the host's clients, not by a repository.
  { key: "server.backlog", mayApply: unchanged },
];

export type Restricted = { layer: Record<string, unknown>; dropped: string[] };

/** The project layer without the keys it may not set over `current`; `dropped` names them. */
export function restrictProjectLayer(layer: Record<string, unknown>, current: unknown): Restricted {
  const out = structuredClone(layer);
  const dropped: string[] = [];
  for (const rule of RULES) {
    const path = rule.key.split(".");
    const project = valueAt(out, path);
    if (project === undefined) continue;
    if (rule.mayApply(project, valueAt(current, path))) continue;
    removeAt(out, path);
    dropped.push(rule.key);
  }
  return { layer: out, dropped };
}

/** The value at a dotted path of a config layer (also the loader's error messages). */
export function valueAt(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const part of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function removeAt(value: Record<string, unknown>, path: readonly string[]): void {
  let current: Record<string, unknown> = value;
  for (const part of path.slice(0, -1)) {
    const next = current[part];
    if (next === null || typeof next !== "object") return;
    current = next as Record<string, unknown>;
  }
  delete current[path.at(-1)!];
}
