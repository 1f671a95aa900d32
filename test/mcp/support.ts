/**
 * MCP test fixture: the reference servers as installed (started by the tests, never mocked), a session
 * opened with the standard preset against the fake provider, and condition waits (no fixed sleeps).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type McpServersConfig, mcpServerSchema } from "../../src/config/mcp-servers.js";
import { type Config, DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import type { Plugin } from "../../src/loop/plugin.js";
import type { McpConnection, McpState } from "../../src/mcp/connection.js";
import type { McpPool } from "../../src/mcp/pool.js";
import { openAgent } from "../../src/presets/open-agent.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, type FakeScript, startFakeProvider } from "../../testing/fake-provider/index.js";
import { guard } from "../support/wait.js";

const root = (path: string) => fileURLToPath(new URL(`../../node_modules/${path}`, import.meta.url));
export const EVERYTHING = root("@modelcontextprotocol/server-everything/dist/index.js");
export const FILESYSTEM = root("@modelcontextprotocol/server-filesystem/dist/index.js");
export const MEMORY = root("@modelcontextprotocol/server-memory/dist/index.js");
export const CHANGING = fileURLToPath(new URL("./fixtures/changing-server.mjs", import.meta.url));

/** A stdio entry for one of the installed servers (run with this node, no PATH lookup). */
/**
 * A stdio server entry. Its start is bounded by a failure guard rather than the 10 s default: a node
 * server takes seconds to start on a loaded machine, and a test that wants a start to fail says so.
 */
export function stdio(script: string, args: string[] = [], extra: Record<string, unknown> = {}) {
  return mcpServerSchema.parse({
    command: process.execPath,
    args: [script, ...args],
    startup_timeout_ms: guard(30_000),
    ...extra,
  });
}

export type Session = {
  events: LogEvent[];
  fake: FakeProvider;
  store: Store;
  home: string;
  /** Tool results by call id. */
  results: Map<string, { text: string; isError?: boolean }>;
  stderr: string[];
};

export function configWith(mcp: McpServersConfig, patch: Partial<Config> = {}, baseUrl = ""): Config {
  return {
    ...DEFAULT_CONFIG,
    ...patch,
    approval: "never",
    session: { titles: false },
    model: { ...DEFAULT_CONFIG.model, base_url: baseUrl, ...patch.model },
    mcp_servers: withDefaults(mcp),
  };
}

/** Entries as the config loader gives them (defaults filled). */
export function withDefaults(mcp: Record<string, object>): McpServersConfig {
  const out: McpServersConfig = {};
  for (const [name, entry] of Object.entries(mcp)) out[name] = mcpServerSchema.parse(entry);
  return out;
}

/**
 * Runs one or more turns (one prompt each) of a standard-preset session with these MCP servers, the fake
 * provider answering from `script`. `between(turn)` runs after each turn (waits for conditions).
 */
export async function runSession(options: {
  mcp: McpServersConfig;
  script: FakeScript;
  prompts?: string[];
  env?: NodeJS.ProcessEnv;
  pool?: McpPool;
  patch?: Partial<Config>;
  plugins?: Plugin[];
  between?: (turn: number, agent: Awaited<ReturnType<typeof openAgent>>["agent"]) => Promise<void>;
}): Promise<Session> {
  const home = mkdtempSync(join(tmpdir(), "bdsh-mcp-"));
  const workspace = mkdtempSync(join(tmpdir(), "bdsh-mcp-ws-"));
  const fake = await startFakeProvider({ script: options.script });
  const store = await openStore({ home });
  const stderr: string[] = [];
  const env = { DEEPSEEK_API_KEY: "test-key-not-secret", PATH: process.env.PATH, ...options.env };
  try {
    const { agent, session } = await openAgent({
      store,
      config: configWith(options.mcp, options.patch, fake.url),
      workspace,
      home,
      env,
      ...(options.plugins ? { plugins: options.plugins } : {}),
      toolOptions: {
        home,
        env,
        onPluginFailure: (failure) => stderr.push(`${failure.name}: ${failure.error}`),
        ...(options.pool ? { mcp: options.pool } : {}),
      },
    });
    const prompts = options.prompts ?? ["go"];
    for (const [turn, prompt] of prompts.entries()) {
      await agent.followup(prompt);
      await agent.whenIdle();
      await options.between?.(turn, agent);
    }
    await agent.close();
    const events = await store.read(session.id);
    const results = new Map<string, { text: string; isError?: boolean }>();
    for (const event of events)
      if (event.type === "tool/result")
        results.set(event.data.callId, {
          text: event.data.text,
          ...(event.data.isError ? { isError: true } : {}),
        });
    return { events, fake, store, home, results, stderr };
  } finally {
    await store.close();
    await fake.close();
  }
}

/** Resolves when the connection reaches `state` (now or later). */
export function waitForState(connection: McpConnection, state: McpState): Promise<void> {
  if (connection.state === state) return Promise.resolve();
  return new Promise((resolve) => {
    const stop = connection.on((event) => {
      if (event.kind === "state" && event.state === state) {
        stop();
        resolve();
      }
    });
  });
}

/** Resolves when `check()` holds, re-checked on every event of the connection. */
export function waitFor(connection: McpConnection, check: () => boolean): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve) => {
    const stop = connection.on(() => {
      if (check()) {
        stop();
        resolve();
      }
    });
  });
}

/** A gate for the reconnect back-off: each sleep waits until `open()`. */
export function gatedSleep(): {
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  open(): void;
  delays: number[];
} {
  const delays: number[] = [];
  let release: (() => void) | undefined;
  let opened = false;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    delays,
    open: () => {
      opened = true;
      release?.();
    },
    sleep: (ms, signal) => {
      delays.push(ms);
      if (opened) return Promise.resolve();
      return new Promise((resolve, reject) => {
        signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
        void gate.then(resolve);
      });
    },
  };
}

/** A port nothing listens on now (for the HTTP server to take, or for a refused connection). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export function toolNamesOf(request: { body: unknown }): string[] {
  const body = request.body as { tools?: Array<{ function: { name: string } }> };
  return (body.tools ?? []).map((t) => t.function.name);
}

export function allText(session: Session): string {
  return JSON.stringify(session.events) + JSON.stringify(session.fake.requests) + session.stderr.join("\n");
}

/** `${NAME}` as written in config (built, so no template-looking literal sits in the source). */
export function ref(name: string): string {
  return ["$", "{", name, "}"].join("");
}

/** Starts server-everything over HTTP (`streamableHttp` or `sse`) on a free port; resolves once it listens. */
export async function startHttpEverything(
  mode: "streamableHttp" | "sse",
  onPort?: number,
): Promise<{ url: string; port: number; child: ChildProcess; stop(): Promise<void> }> {
  const port = onPort ?? (await freePort());
  const child = spawn(process.execPath, [EVERYTHING, mode], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let seen = "";
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`server-everything ${mode} exited ${code}: ${seen}`)));
    child.stderr!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (new RegExp(`port ${port}`).test(seen)) resolve();
    });
  });
  child.removeAllListeners("exit");
  const path = mode === "sse" ? "/sse" : "/mcp";
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}
