/**
 * SIGTERM on `bdsh serve` while a turn outlasts `server.shutdown_grace_ms`: the process stops within the
 * grace and exits 0 on both stores, and the interrupted turn is left for another server, which closes it
 * honestly (every call answered, `turn/end`) and drives the session's next message. Ways a turn outlasts the
 * grace: a command that runs long (alone, or beside a background job), a provider that stops sending
 * mid-reply, an approval nobody answers — all cancelled and closed `aborted` by the stopping server — and a
 * tool that ignores its cancel, which the stopping server leaves open for the next one to repair.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { findPairingError } from "../../src/log/pairing.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { post, type ServeProcess, startServe, writeServeConfig } from "../chaos/serve-process.js";
import { type FreshDatabase, freshPostgresDatabase } from "../support/fresh-database.js";
import { guard, waitUntil } from "../support/wait.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

type Stall = "command" | "stream" | "approval" | "job" | "stuck";

/** First request: the stall; any request after a person's second message: a plain answer. */
function script(stall: Stall) {
  return (request: FakeRequest) => {
    const messages = (request.body?.messages ?? []) as Array<{ role: string; content?: unknown }>;
    if (messages.some((m) => m.role === "user" && String(m.content).includes("SECOND")))
      return { text: "second answered" };
    const results = messages.filter((m) => m.role === "tool").length;
    if (stall === "stuck") return { toolCalls: [{ id: "s1", name: "stuck", arguments: {} }] };
    if (stall === "job" && results === 0)
      return {
        toolCalls: [
          {
            id: "j1",
            name: "bash",
            arguments: { command: "sleep 120", description: "a job that runs on", run_in_background: true },
          },
        ],
      };
    if (stall === "command" || stall === "approval" || stall === "job")
      return {
        toolCalls: [
          {
            id: "c1",
            name: "bash",
            arguments:
              stall === "command"
                ? { command: "sleep 120", description: "wait a long time" }
                : stall === "job"
                  ? { command: "sleep 121", description: "wait beside the job" }
                  : { command: "rm -rf build", description: "clean the build" },
          },
        ],
      };
    // A reply whose frames come slower than any grace: the stream is open, nothing more arrives.
    return { text: "a reply that takes its time to arrive in full", chunkSize: 4, frameDelayMs: 60_000 };
  };
}

async function setUp(store: "SQLite" | "PostgreSQL", stall: Stall) {
  const dir = mkdtempSync(join(tmpdir(), "bdsh-graceful-"));
  mkdirSync(join(dir, "ws"));
  mkdirSync(join(dir, "home"));
  let database: FreshDatabase | undefined;
  if (store === "PostgreSQL") {
    database = await freshPostgresDatabase("graceful");
    cleanups.push(() => database!.drop());
  }
  const fake: FakeProvider = await startFakeProvider({ script: script(stall) });
  cleanups.push(() => fake.close());
  const configFile = join(dir, "config.yaml");
  // The grace leaves the stopping server from half of it (cancel) to 85 % (give up) to close the turn: 1 s
  // left 350 ms, which a loaded CI machine overran (the turn then ended `interrupted`, not `aborted`).
  writeServeConfig(configFile, { shutdown_grace_ms: 3_000, lease_ttl_ms: 2_000, sweep_interval_ms: 300 });
  const env = {
    ...(database ? { databaseUrl: database.url } : {}),
    fakeUrl: fake.url,
    home: join(dir, "home"),
    workspace: join(dir, "ws"),
    configFile,
    approval: stall === "approval" ? "ask" : "never",
  };
  // A plugin tool that never ends and ignores its cancel (a hung MCP call, say): only leaving it works.
  mkdirSync(join(dir, "home", "plugins"));
  writeFileSync(
    join(dir, "home", "plugins", "stuck.mjs"),
    `export function register(ctx) { ctx.registerTool({ name: "stuck", toolset: "stuck", description: "never ends", parameters: { type: "object", properties: {} }, execute: () => new Promise(() => {}) }); }`,
  );
  const reader: Store = await openStore({
    home: env.home,
    ...(database ? { databaseUrl: database.url } : {}),
  });
  cleanups.push(() => reader.close());
  const started: ServeProcess[] = [];
  cleanups.push(async () => {
    for (const server of started) if (server.child.exitCode === null) server.child.kill("SIGKILL");
  });
  const serve = async () => {
    const server = await startServe(env);
    started.push(server);
    return server;
  };
  return { env, fake, reader, serve };
}

for (const store of ["SQLite", "PostgreSQL"] as const) {
  describe(`SIGTERM while a turn outlasts the grace (${store})`, () => {
    for (const stall of ["command", "stream", "approval", "job", "stuck"] as const) {
      it(`a ${stall} that outlasts it: the server exits 0, another closes the turn and goes on`, async () => {
        const { fake, reader, serve } = await setUp(store, stall);
        const first = await serve();
        const session = await post(`${first.url}/v1/sessions`, { title: "graceful" });
        const id = String(session.id);
        await post(`${first.url}/v1/sessions/${id}/messages`, { text: "FIRST do the long thing" });
        // Someone watches the session (the dashboard): its event stream is open when the server stops.
        const watching = new AbortController();
        const stream = await fetch(`${first.url}/v1/sessions/${id}/events`, {
          headers: { authorization: `Bearer ${first.token}` },
          signal: watching.signal,
        });
        void stream.body?.pipeTo(new WritableStream()).catch(() => undefined);
        cleanups.push(async () => watching.abort());
        if (stall !== "stream")
          await waitUntil(
            async () =>
              (await reader.read(id)).some(
                (e) =>
                  e.type === (stall === "approval" ? "approval/requested" : "tool/call") &&
                  (stall !== "job" || JSON.stringify(e.data).includes("sleep 121")),
              ),
            `the ${stall} to start`,
            {
              describe: async () =>
                (await reader.read(id))
                  .map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 300)}`)
                  .join("\n"),
            },
          );
        else await waitUntil(() => fake.requests.length >= 1, "the model request to be open");

        first.child.kill("SIGTERM");
        // The guard only fails a server that never stops; the grace is 3 s.
        const code = await Promise.race([
          first.exited,
          new Promise<string>((resolve) => setTimeout(() => resolve("still running"), guard(20_000))),
        ]);
        expect(code, first.stderr()).toBe(0);

        // Another server takes the session: the interrupted turn ends honestly and the next message runs.
        const second = await serve();
        await post(`${second.url}/v1/sessions/${id}/messages`, { text: "SECOND are you there" });
        const events = await waitUntil(
          async () => {
            const all = await reader.read(id);
            return all.some(
              (e) => e.type === "assistant/message" && JSON.stringify(e.data).includes("second answered"),
            ) && all.at(-1)?.type === "agent/status"
              ? all
              : undefined;
          },
          "the second server to answer the next message",
          { describe: async () => (await reader.read(id)).map((e) => `${e.seq} ${e.type}`).join("\n") },
        );
        const ends = events.filter((e): e is LogEvent<"turn/end"> => e.type === "turn/end");
        expect(ends).toHaveLength(2);
        // Closed here when cancelling worked; a tool that ignored its cancel is left open, and the next server
        // repairs it as after a crash.
        expect(ends[0]!.data.reason).toBe(stall === "stuck" ? "interrupted" : "aborted");
        expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
        second.child.kill("SIGTERM");
        expect(await second.exited).toBe(0);
      });
    }
  });
}
