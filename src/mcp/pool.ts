/**
 * The MCP servers of one process: one connection per configured server, started in
 * parallel, shared by every session of the process (`bdsh serve`), closed once.
 *
 * Invariants:
 * - `ready()` never waits longer than the slowest server's `startup_timeout_ms` (each connection bounds its
 *   own start); a server that fails to start is reported once (`onReport`) and the others work.
 * - The pool's redactor knows every expanded `env`/`headers` value (the canary), on top of the
 *   redactor it was given.
 * - `close()` closes every connection; after it nothing is left running (stdio children end).
 */

import { type McpServersConfig, secretValues } from "../config/mcp-servers.js";
import { Redactor } from "../log/redact.js";
import { McpConnection, type McpConnectionOptions } from "./connection.js";

export type McpPoolOptions = Omit<McpConnectionOptions, "redactor"> & {
  redactor?: Redactor;
  /** A server that failed to start or gave up reconnecting (once per server and failure). */
  onReport?: (server: string, message: string) => void;
};

export class McpPool {
  readonly connections: ReadonlyMap<string, McpConnection>;
  readonly redactor: Redactor;
  private startAll: Promise<void> | undefined;
  private closed = false;

  constructor(
    readonly servers: McpServersConfig,
    options: McpPoolOptions,
  ) {
    this.redactor = (options.redactor ?? Redactor.none).with(secretValues(servers, options.env));
    const connections = new Map<string, McpConnection>();
    for (const [name, config] of Object.entries(servers)) {
      const connection = new McpConnection(name, config, { ...options, redactor: this.redactor });
      connection.on((event) => {
        if (event.kind === "state" && event.state === "failed")
          options.onReport?.(name, connection.outageText());
      });
      connections.set(name, connection);
    }
    this.connections = connections;
  }

  get size(): number {
    return this.connections.size;
  }

  /** Starts every enabled server at once (idempotent); resolves when each is up, failed or timed out. */
  ready(): Promise<void> {
    this.startAll ??= Promise.all([...this.connections.values()].map((c) => c.start())).then(() => undefined);
    return this.startAll;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.connections.values()].map((c) => c.close()));
  }
}
