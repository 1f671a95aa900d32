/**
 * One MCP server connection on the official SDK client (T21).
 *
 * States: `disabled` (config `enabled: false`), `connecting` (first start), `ready`, `reconnecting` (after a
 * drop), `failed` (never started, or gave up), `closed`.
 *
 * Invariants:
 * - The first start is bounded by `startup_timeout_ms`; a server that fails to start is `failed` and stays
 *   so (reported once by the pool, never retried behind the user's back).
 * - A dropped connection (the stdio child exits, the HTTP server stops answering) reconnects with back-off
 *   from 500 ms doubling to 30 s, 10 attempts (T21); then `failed`. Calls made while it is down answer at
 *   once with an error naming the outage; they never wait for the reconnect.
 * - The tool list is kept current: `notifications/tools/list_changed` and every reconnect re-list the tools
 *   (all pages); listeners hear only real changes. Refreshes run one at a time. Tools that need MCP's
 *   task-based execution are left out (a plain `tools/call` cannot run them).
 * - A stdio server gets the SDK's minimal inherited environment plus its configured `env`, never the
 *   harness's own secrets; its stderr is captured (last lines, redacted) for `last error`, not printed.
 * - Streamable HTTP first; a server that refuses it is tried with the older HTTP+SSE transport.
 * - Every error text kept or thrown passes through the redactor (the expanded `env`/`headers` values).
 * - `close()` ends the child / the HTTP session and cancels a pending reconnect; nothing outlives it.
 */
import { resolve } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import {
  expandMap,
  isStdio,
  type McpServerConfig,
  type McpServerSettings,
  serverSettingsFrom,
  toolAllowed,
} from "../config/mcp-servers.js";
import { Redactor } from "../log/redact.js";
import type { McpCallResult } from "./results.js";
import { loadedMcpSdk, loadMcpSdk, type McpSdk } from "./sdk.js";

export type McpState = "disabled" | "connecting" | "ready" | "reconnecting" | "failed" | "closed";
export type McpTransportKind = "stdio" | "streamable-http" | "sse";

/** T21: back-off from 500 ms up to 30 s, 10 attempts. */
export type ReconnectPolicy = { initialMs: number; maxMs: number; attempts: number };
export const T21_RECONNECT: ReconnectPolicy = { initialMs: 500, maxMs: 30_000, attempts: 10 };

export function backoffDelays(policy: ReconnectPolicy = T21_RECONNECT): number[] {
  return Array.from({ length: policy.attempts }, (_, i) => Math.min(policy.maxMs, policy.initialMs * 2 ** i));
}

export type McpConnectionOptions = {
  env: NodeJS.ProcessEnv;
  /** Relative `cwd` entries resolve against this (the workspace). */
  cwd: string;
  redactor?: Redactor;
  reconnect?: ReconnectPolicy;
  /** Waits between reconnect attempts; tests hold it to look at the outage deterministically. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Every JSON-RPC message sent and received (tests, debugging); never logged by default. */
  trace?: (direction: "out" | "in", message: unknown) => void;
};

export type McpConnectionEvent =
  | { kind: "state"; state: McpState }
  | { kind: "tools"; tools: readonly Tool[] };

/** A call made while the server is down, or on a connection that dropped during the call. */
export class McpUnavailableError extends Error {
  readonly code = "MCP_UNAVAILABLE";
}

const STDERR_KEEP = 4_000;

export class McpConnection {
  readonly transport: McpTransportKind | "http";
  /** The entry with its defaults filled. */
  readonly config: McpServerSettings;
  private stateValue: McpState;
  private client: Client | undefined;
  private transportKind: McpTransportKind | undefined;
  private toolList: Tool[] = [];
  private lastErrorText: string | undefined;
  private stderrTail = "";
  private attempt = 0;
  private started: Promise<void> | undefined;
  private refreshing: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<(event: McpConnectionEvent) => void>();
  private readonly closing = new AbortController();
  private readonly redactor: Redactor;
  private childPid: number | undefined;
  private resourcesOffered = false;
  private activeTransport: Transport | undefined;

  constructor(
    readonly name: string,
    config: McpServerConfig,
    private readonly options: McpConnectionOptions,
  ) {
    this.config = serverSettingsFrom(config);
    this.transport = isStdio(config) ? "stdio" : "http";
    this.stateValue = this.config.enabled ? "connecting" : "disabled";
    this.redactor = options.redactor ?? Redactor.none;
  }

  get state(): McpState {
    return this.stateValue;
  }

  /** The transport in use (`streamable-http` or `sse` once an HTTP server answered). */
  get transportInUse(): McpTransportKind | "http" {
    return this.transportKind ?? this.transport;
  }

  /** The server's tools allowed by the config's `tools: {include, exclude}`, in listing order. */
  get tools(): readonly Tool[] {
    return this.toolList;
  }

  get lastError(): string | undefined {
    return this.lastErrorText;
  }

  /** The reconnect attempt under way (0 when none). */
  get reconnectAttempt(): number {
    return this.attempt;
  }

  /** The stdio child's pid while connected (tests kill it). */
  get pid(): number | undefined {
    return this.childPid;
  }

  /** The server said it has resources (kept while it is down, so a session's tools stay the same). */
  get offersResources(): boolean {
    return this.resourcesOffered;
  }

  on(listener: (event: McpConnectionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts the first connection once; resolves when it is up or has failed (never rejects). */
  start(): Promise<void> {
    if (!this.config.enabled) return Promise.resolve();
    this.started ??= this.connectOnce().then(
      () => this.setState("ready"),
      (error: unknown) => {
        this.lastErrorText = this.describe(error);
        this.setState("failed");
      },
    );
    return this.started;
  }

  /** Why calls fail now, for the model and `bdsh mcp list`. */
  outageText(): string {
    const why = this.lastErrorText ? ` (${this.lastErrorText})` : "";
    switch (this.stateValue) {
      case "reconnecting":
        return `MCP server "${this.name}" is unavailable${why}; reconnecting, attempt ${this.attempt} of ${this.policy().attempts}. Try again later, or go on without it.`;
      case "connecting":
        return `MCP server "${this.name}" is still starting. Try again later, or go on without it.`;
      case "disabled":
        return `MCP server "${this.name}" is disabled in the configuration.`;
      case "closed":
        return `MCP server "${this.name}" has been shut down.`;
      default:
        return `MCP server "${this.name}" is unavailable${why}. Go on without it.`;
    }
  }

  async callTool(
    tool: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<McpCallResult> {
    const client = this.readyClient();
    try {
      return (await client.callTool({ name: tool, arguments: args }, undefined, {
        ...(options.signal ? { signal: options.signal } : {}),
        timeout: options.timeoutMs ?? this.config.timeout_ms,
      })) as McpCallResult;
    } catch (error) {
      throw this.callError(error, options.signal);
    }
  }

  async listResources(): Promise<{ resources: Resource[]; templates: ResourceTemplate[] }> {
    const client = this.readyClient();
    try {
      const resources: Resource[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listResources(cursor ? { cursor } : {}, {
          timeout: this.config.timeout_ms,
        });
        resources.push(...page.resources);
        cursor = page.nextCursor;
      } while (cursor);
      const templates: ResourceTemplate[] = [];
      cursor = undefined;
      do {
        const page: { resourceTemplates: ResourceTemplate[]; nextCursor?: string | undefined } = await client
          .listResourceTemplates(cursor ? { cursor } : {}, { timeout: this.config.timeout_ms })
          .catch(() => ({ resourceTemplates: [] }));
        templates.push(...page.resourceTemplates);
        cursor = page.nextCursor;
      } while (cursor);
      return { resources, templates };
    } catch (error) {
      throw this.callError(error);
    }
  }

  async readResource(uri: string, signal?: AbortSignal) {
    const client = this.readyClient();
    try {
      return await client.readResource(
        { uri },
        { timeout: this.config.timeout_ms, ...(signal ? { signal } : {}) },
      );
    } catch (error) {
      throw this.callError(error, signal);
    }
  }

  async close(): Promise<void> {
    if (this.stateValue === "closed") return;
    this.closing.abort();
    const client = this.client;
    const transport = this.activeTransport;
    this.client = undefined;
    this.activeTransport = undefined;
    this.childPid = undefined;
    if (this.config.enabled) this.setState("closed");
    // Streamable HTTP: end the server's session (DELETE), bounded; a stdio child ends with its stdin.
    const sdk = loadedMcpSdk();
    if (sdk && transport instanceof sdk.StreamableHTTPClientTransport) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        transport.terminateSession().catch(() => undefined),
        new Promise((resolve) => {
          timer = setTimeout(resolve, 1_000);
        }),
      ]);
      clearTimeout(timer);
    }
    await closeQuietly(client);
  }

  // --- internals ---

  /** The SDK (loaded by the first connection attempt; nothing below runs before it). */
  private get sdk(): McpSdk {
    const sdk = loadedMcpSdk();
    if (!sdk) throw new Error("the MCP SDK is not loaded yet");
    return sdk;
  }

  private policy(): ReconnectPolicy {
    return this.options.reconnect ?? T21_RECONNECT;
  }

  private readyClient(): Client {
    if (this.stateValue !== "ready" || !this.client) throw new McpUnavailableError(this.outageText());
    return this.client;
  }

  /** A call's failure: a dropped connection starts the reconnect and says so; anything else is the server's. */
  private callError(error: unknown, signal?: AbortSignal): Error {
    if (signal?.aborted) return new Error("tool call aborted");
    const { McpError, ErrorCode, StreamableHTTPError } = this.sdk;
    const dropped =
      (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) ||
      (error instanceof StreamableHTTPError && error.code === 404) || // the server lost our session
      (!(error instanceof McpError) && isNetworkError(error));
    if (dropped && this.stateValue === "ready") this.dropped(error);
    if (dropped) return new McpUnavailableError(this.outageText());
    return new Error(this.describe(error));
  }

  private describe(error: unknown): string {
    let text = error instanceof Error ? error.message : String(error);
    const sdk = loadedMcpSdk();
    if (sdk && error instanceof sdk.McpError) text = text.replace(/^(MCP error -?\d+: )+/, "");
    const tail = this.stderrTail.trim().split("\n").at(-1);
    if (tail && this.stateValue !== "ready") text = `${text}; stderr: ${tail}`;
    return this.redactor.text(text.replace(/\s+/g, " ").trim().slice(0, 500));
  }

  private setState(state: McpState): void {
    if (this.stateValue === state) return;
    if (this.stateValue === "closed") return;
    this.stateValue = state;
    this.emit({ kind: "state", state });
  }

  private emit(event: McpConnectionEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // A listener's fault is its own; the connection goes on.
      }
    }
  }

  /** One connection attempt, start to tool list, within one `startup_timeout_ms` deadline. */
  private async connectOnce(): Promise<void> {
    if (this.closing.signal.aborted) throw new Error("closed");
    await loadMcpSdk();
    const timeout = this.config.startup_timeout_ms;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error(`did not start within ${timeout} ms`)), timeout);
    const signal = AbortSignal.any([this.closing.signal, deadline.signal]);
    try {
      if (isStdio(this.config)) {
        await this.connectWith(this.stdioTransport(), "stdio", timeout, signal);
      } else {
        try {
          await this.connectWith(this.httpTransport("streamable-http"), "streamable-http", timeout, signal);
        } catch (first) {
          if (signal.aborted) throw first;
          // A server that answers the older way gets the HTTP+SSE transport.
          try {
            await this.connectWith(this.httpTransport("sse"), "sse", timeout, signal);
          } catch {
            throw first;
          }
        }
      }
      await this.refreshTools(signal);
    } catch (error) {
      const client = this.client;
      this.client = undefined;
      this.childPid = undefined;
      await closeQuietly(client);
      throw deadline.signal.aborted ? deadline.signal.reason : error;
    } finally {
      clearTimeout(timer);
    }
  }

  private async connectWith(
    transport: Transport,
    kind: McpTransportKind,
    timeout: number,
    signal: AbortSignal,
  ): Promise<void> {
    const client = new this.sdk.Client({ name: "better-dsh", version: "0.1.0" }, { capabilities: {} });
    client.setNotificationHandler(this.sdk.ToolListChangedNotificationSchema, () => {
      this.refreshing = this.refreshing.then(() => this.refreshTools()).catch(() => undefined);
    });
    if (this.options.trace) traceTransport(transport, this.options.trace);
    client.onclose = () => {
      if (this.client === client) this.dropped(new Error("the connection closed"));
    };
    try {
      await client.connect(transport, { timeout, signal });
    } catch (error) {
      await closeQuietly(client);
      throw error;
    }
    if (signal.aborted) {
      await closeQuietly(client);
      throw signal.reason ?? new Error("closed");
    }
    this.client = client;
    this.activeTransport = transport;
    this.resourcesOffered = client.getServerCapabilities()?.resources !== undefined;
    this.transportKind = kind;
    this.childPid =
      transport instanceof this.sdk.StdioClientTransport ? (transport.pid ?? undefined) : undefined;
  }

  private stdioTransport(): StdioClientTransport {
    const config = this.config as McpServerConfig & { command: string };
    const transport = new this.sdk.StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      env: expandMap(config.env ?? {}, this.options.env),
      cwd: resolve(this.options.cwd, config.cwd ?? "."),
      stderr: "pipe",
    });
    this.stderrTail = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_KEEP);
    });
    return transport;
  }

  private httpTransport(kind: "streamable-http" | "sse"): Transport {
    const url = new URL(this.config.url!);
    const headers = expandMap(this.config.headers ?? {}, this.options.env);
    if (kind === "sse") {
      return new this.sdk.SSEClientTransport(url, {
        requestInit: { headers },
        eventSourceInit: {
          fetch: (input, init) =>
            fetch(input, { ...init, headers: { ...toRecord(init?.headers), ...headers } }),
        },
      });
    }
    return new this.sdk.StreamableHTTPClientTransport(url, {
      requestInit: { headers },
      // Our own back-off (T21) reconnects the session; the SDK's stream retries stay short.
      reconnectionOptions: {
        initialReconnectionDelay: 500,
        maxReconnectionDelay: 30_000,
        reconnectionDelayGrowFactor: 2,
        maxRetries: 2,
      },
    });
  }

  private async refreshTools(signal?: AbortSignal): Promise<void> {
    const client = this.client;
    if (!client) return;
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, {
        timeout: this.config.startup_timeout_ms,
        ...(signal ? { signal } : {}),
      });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    // A tool that only runs as an MCP task (`execution.taskSupport: "required"`) cannot be called with a
    // plain tools/call, so it is not offered (tasks are not supported yet).
    const allowed = tools.filter(
      (tool) => toolAllowed(this.config, tool.name) && tool.execution?.taskSupport !== "required",
    );
    if (JSON.stringify(allowed) === JSON.stringify(this.toolList)) return;
    this.toolList = allowed;
    this.emit({ kind: "tools", tools: allowed });
  }

  private dropped(error: unknown): void {
    if (this.closing.signal.aborted || this.stateValue !== "ready") return;
    const client = this.client;
    this.client = undefined;
    this.childPid = undefined;
    this.lastErrorText = this.describe(error);
    void closeQuietly(client);
    void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    const delays = backoffDelays(this.policy());
    const sleep = this.options.sleep ?? abortableSleep;
    for (let i = 0; i < delays.length; i++) {
      this.attempt = i + 1;
      this.setState("reconnecting");
      try {
        await sleep(delays[i]!, this.closing.signal);
      } catch {
        return; // closed
      }
      if (this.closing.signal.aborted) return;
      try {
        await this.connectOnce();
        this.attempt = 0;
        this.setState("ready");
        return;
      } catch (error) {
        this.lastErrorText = this.describe(error);
      }
    }
    this.attempt = 0;
    this.setState("failed");
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error("aborted"));
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("aborted"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

async function closeQuietly(client: Client | undefined): Promise<void> {
  if (!client) return;
  client.onclose = undefined;
  await client.close().catch(() => undefined);
}

function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const text = `${error.message} ${String((error as { cause?: unknown }).cause ?? "")}`;
  return /fetch failed|ECONNREFUSED|ECONNRESET|EPIPE|socket hang up|Not connected|other side closed/i.test(
    text,
  );
}

function toRecord(headers: unknown): Record<string, string> {
  if (!headers) return {};
  if (headers instanceof Headers) return Object.fromEntries(headers.entries());
  if (Array.isArray(headers)) return Object.fromEntries(headers as [string, string][]);
  return headers as Record<string, string>;
}

function traceTransport(
  transport: Transport,
  trace: (direction: "out" | "in", message: unknown) => void,
): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    trace("out", message);
    return send(message, options);
  };
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const onmessage = transport.onmessage;
    if (onmessage) {
      transport.onmessage = (message, extra) => {
        trace("in", message);
        onmessage(message, extra);
      };
    }
    return start();
  };
}
