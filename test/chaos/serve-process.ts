/**
 * Real `bdsh serve` processes for the chaos test and the serve bench: the built CLI (or the sources through
 * tsx when asked),
 * killed with SIGKILL or stopped with SIGTERM, and a scripted fake model whose task is a number of `bash`
 * steps, each appending its own call id to a side-effect log (a call that ran twice shows up twice).
 * Each process's bearer token (`BDSH_SERVER_TOKEN` when the env gives one, else the one the process made
 * and printed on stderr) is kept by origin, so `post` and `get` send it (issue 14 finding 3).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FakeReply, FakeRequest } from "../../testing/fake-provider/index.js";
import { BDSH_MAIN, TSX_LOADER } from "../support/run-cli.js";

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

export type ServeProcess = {
  child: ChildProcess;
  url: string;
  /** The bearer token this process accepts. */
  token: string;
  exited: Promise<number | null>;
  stderr: () => string;
};

export type ServeEnv = {
  /** PostgreSQL; none: SQLite under `home`. */
  databaseUrl?: string;
  fakeUrl: string;
  home: string;
  workspace: string;
  configFile: string;
  token?: string;
  /** Extra node flags (a profile: `--cpu-prof`). */
  nodeArgs?: string[];
  /** `false`: run the sources through tsx instead of the built `dist/cli/main.js` (what a deployment runs). */
  built?: boolean;
  /** `BDSH_APPROVAL` (default `never`). */
  approval?: string;
  /** More environment (an OTLP endpoint for the serve bench). */
  extraEnv?: Record<string, string>;
};

/** The token of each started process, by its origin (`http://127.0.0.1:PORT`). */
const tokens = new Map<string, string>();

/** The `authorization` header for a URL of a started process (none for an unknown origin). */
export function authFor(url: string): Record<string, string> {
  const token = tokens.get(new URL(url).origin);
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** POSTs JSON to a server; a non-2xx answer throws with its status and body. */
export async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...authFor(url) },
    body: JSON.stringify(body),
  });
  if (response.status >= 300) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/** GETs JSON from a server; a non-2xx answer throws with its status and body. */
export async function get(url: string): Promise<Record<string, unknown>> {
  const response = await fetch(url, { headers: authFor(url) });
  if (response.status >= 300) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

export function writeServeConfig(path: string, server: Record<string, number>): void {
  const lines = Object.entries(server).map(([k, v]) => `  ${k}: ${v}`);
  writeFileSync(
    path,
    `server:\n${lines.join("\n")}\ncontinuation:\n  announced_action: false\n  open_todos: false\n`,
  );
}

export function startServe(env: ServeEnv): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    [
      ...(env.nodeArgs ?? []),
      ...(env.built === false ? ["--import", TSX_LOADER, MAIN] : [BDSH_MAIN]),
      "serve",
      "--port",
      "0",
      "--host",
      "127.0.0.1",
    ],
    {
      cwd: env.workspace,
      env: {
        PATH: process.env.PATH,
        ...(env.databaseUrl ? { DATABASE_URL: env.databaseUrl } : {}),
        BDSH_HOME: env.home,
        BDSH_CONFIG: env.configFile,
        BDSH_PROVIDER: "deepseek",
        BDSH_BASE_URL: env.fakeUrl,
        BDSH_APPROVAL: env.approval ?? "never",
        DEEPSEEK_API_KEY: "test",
        ...(env.token ? { BDSH_SERVER_TOKEN: env.token } : {}),
        ...env.extraEnv,
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const url = /serving on (http:\/\/\S+)/.exec(stderr)?.[1];
      const token = env.token ?? /Authorization: Bearer ([\w-]+)\n/.exec(stderr)?.[1];
      // The second line (which token to send) follows the first: wait for both.
      if (url && token && /\/v1 requests need the header[^\n]*\n/.test(stderr)) {
        tokens.set(new URL(url).origin, token);
        resolve({ child, url, token, exited, stderr: () => stderr });
      }
    });
    void exited.then((code) => reject(new Error(`serve exited ${code} before listening: ${stderr}`)));
  });
}

/** The task: `steps` bash calls, each appending its call id to `effectsFile`, then the final text. */
export const FINAL_TEXT = "ALL DONE";

export function taskScript(effectsFile: string, steps: number, frameDelayMs = 0) {
  return (request: FakeRequest): FakeReply => {
    const messages = (request.body?.messages ?? []) as Array<{ role: string; content?: unknown }>;
    const key = messages
      .map((m) => (typeof m.content === "string" ? /TASK:(\w+)/.exec(m.content)?.[1] : undefined))
      .find(Boolean);
    const done = messages.filter((m) => m.role === "tool" && String(m.content).includes("EFFECT-OK")).length;
    const results = messages.filter((m) => m.role === "tool").length;
    if (!key || done >= steps) return { text: FINAL_TEXT, frameDelayMs };
    const id = `${key}_${results}`;
    return {
      frameDelayMs,
      toolCalls: [
        {
          id,
          name: "bash",
          arguments: {
            command: `echo ${id} >> ${effectsFile} && echo EFFECT-OK`,
            description: "record the step",
          },
        },
      ],
    };
  };
}

/** Inside the workspace: the sandbox leaves only the workspace writable (issue 14). */
export function effectsPath(workspace: string): string {
  return join(workspace, "effects.log");
}
