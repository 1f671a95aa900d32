/**
 * What a sandboxed command may reach on the network (`sandbox_network`, Codex's workspace-write default of
 * no network), and the words the model gets about it.
 *
 * Invariants:
 * - `off`: the command runs in its own network namespace (bwrap `--unshare-net`) whose only interface is a
 *   loopback of its own: the internet and every service listening on this machine's loopback (the bdsh
 *   server, PostgreSQL, a browser's debug port) are out of reach.
 * - `proxy`: the same namespace, plus an HTTP(S) proxy the harness runs outside it (egress-proxy.ts) that
 *   forwards only to hosts `hostAllowed` accepts; commands find it in `HTTP_PROXY`/`HTTPS_PROXY`.
 * - `on`: the host's network, shared. `danger-full-access` always shares it, whatever the setting.
 * - An allow entry is `name` (that host, any port), `name:port`, or `*.domain` (names below the domain,
 *   any port). Names compare case-insensitively, without a trailing dot or IPv6 brackets.
 */
export type SandboxNetworkMode = "off" | "proxy" | "on";

export type SandboxNetwork = { mode: SandboxNetworkMode; allow: readonly string[] };

const normalise = (host: string) =>
  host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");

function splitEntry(entry: string): { host: string; port?: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry.trim());
  if (bracketed)
    return { host: normalise(bracketed[1]!), ...(bracketed[2] ? { port: Number(bracketed[2]) } : {}) };
  const withPort = /^([^:]+):(\d+)$/.exec(entry.trim());
  if (withPort) return { host: normalise(withPort[1]!), port: Number(withPort[2]) };
  return { host: normalise(entry) };
}

/** Whether `host:port` is on the proxy's list. */
export function hostAllowed(allow: readonly string[], host: string, port: number): boolean {
  const name = normalise(host);
  if (name === "") return false;
  return allow.some((entry) => {
    const wanted = splitEntry(entry);
    if (wanted.port !== undefined && wanted.port !== port) return false;
    if (wanted.host.startsWith("*.")) return name.endsWith(wanted.host.slice(1));
    return wanted.host === name;
  });
}

const allowedList = (allow: readonly string[]) => (allow.length === 0 ? "none" : allow.join(", "));

/** The text the proxy answers a refused request with (403), which is also what the model reads. */
export function proxyRefusalText(host: string, port: number, allow: readonly string[]): string {
  return `[sandbox: network access denied under sandbox_network proxy: ${host}:${port} is not an allowed host (allowed: ${allowedList(allow)})]`;
}

/**
 * A line of stderr that shows a connection or name lookup failing: curl, wget, Node, Python, psql and
 * bash's `/dev/tcp` wording, and a proxy refusing a tunnel.
 */
const NETWORK_FAILURE =
  /Could not resolve (?:host|proxy)|Couldn't connect to server|Failed to connect to|Network is unreachable|Connection refused|ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|EAI_AGAIN|ENOTFOUND|getaddrinfo|Temporary failure in name resolution|Name or service not known|could not connect to server|connection to server .* failed|CONNECT tunnel failed|from proxy after CONNECT|unable to resolve host address|fetch failed/;

export function networkDenialSeen(stderr: string): boolean {
  return NETWORK_FAILURE.test(stderr);
}

/** The denial marker of a command whose connection failed in a session without (full) network. */
export function networkDenialText(network: SandboxNetwork): string {
  if (network.mode === "proxy") {
    return `[sandbox: network access denied under sandbox_network proxy — only HTTP(S) through the harness's proxy ($HTTPS_PROXY) to the allowed hosts reaches out (allowed: ${allowedList(network.allow)}); this machine's own services are unreachable. Only the user can change this setting; do not look for a way around it]`;
  }
  return "[sandbox: network access denied under sandbox_network off — commands have no network at all, this machine's own services (127.0.0.1) included. Only the user can change this setting; do not look for a way around it]";
}

/** The runtime-context sentence about the network, for a command sandbox that applies the mode. */
export function networkFact(network: SandboxNetwork): string {
  switch (network.mode) {
    case "off":
      return "Network: none (sandbox_network: off). Commands run in their own network namespace with a private loopback only; the internet and the services of this machine (servers and databases on 127.0.0.1) are unreachable, and a connection fails at once.";
    case "proxy":
      return `Network: through a proxy only (sandbox_network: proxy). Commands reach HTTP and HTTPS hosts on the allowed list (${allowedList(network.allow)}) through the harness's proxy, set in $HTTP_PROXY and $HTTPS_PROXY; anything else, the services of this machine included, is unreachable.`;
    default:
      return "Network: shared with this machine (sandbox_network: on).";
  }
}
