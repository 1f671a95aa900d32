/**
 * The many-sessions bench's peer: the same load on a LangGraph.js agent. A ReAct agent (`createReactAgent`)
 * with a checkpointer (SqliteSaver on a file, or PostgresSaver on a fresh database) behind a minimal
 * node:http endpoint, `POST /threads/:id/messages` `{ text }`, which runs one turn on the thread and answers
 * once the run's stream has ended: LangGraph awaits every checkpoint write of the run before it closes the
 * stream, so the answer follows the turn's last checkpoint committed (as `bdsh serve` stores a turn's events
 * before its `turn/end`). Its model is ChatOpenAI, streamed (streamMode "messages"), pointed at the scripted
 * fake provider, which answers each reply after LATENCY_MS, in the bench process.
 *
 * The server runs in a process of its own (this file with the argument `serve`), so its CPU is measured
 * alone, the same way as many-sessions.ts measures `bdsh serve` (./process-cpu.ts): utime + stime from
 * /proc over the window, PostgreSQL's backends apart, PG transactions from pg_stat_database read after the
 * server (and its pool) is gone. The endpoint listens with a backlog of 4096, as `bdsh serve` does by default
 * (`server.backlog`), so both sides get the same queue from the kernel.
 *
 * - Warm-up outside the clock: WARM threads each run one turn answered at once.
 * - SESSIONS threads are each sent one message, all at once, from this process (fetch, one connection per
 *   request, as many-sessions.ts sends them). The turn is STEPS `read` tool calls, then a short text reply.
 *   The clock runs from the first message sent to the last answer. BENCH_PRIMED=1: each thread first runs one
 *   turn answered at once (outside the clock), so the measured turn loads a thread with history.
 * - Dropped: requests that failed at the client (ECONNRESET, ECONNREFUSED, a connect timeout, …), by code.
 *
 * The peer's server runs as plain JavaScript, as ours does (many-sessions.ts runs the built `bdsh`): this
 * file compiled by esbuild (no `keepNames`) into bench/.work/ at the start of each run, so neither side pays
 * for tsx (./built-server.ts). BENCH_SOURCES=1 runs both through tsx instead.
 *
 * BENCH_PEER=floor runs, in the same harness, the least a durable one-reply turn can cost in Node on this
 * machine instead of LangGraph.js: ./floor-server.ts (node:http in, the message's row committed, one streamed
 * request to the provider over node:http, the reply's rows committed in one statement, the answer). What `bdsh
 * serve` spends above it is what its features cost; what the floor spends is out of any harness's reach here.
 *
 *   node --import tsx bench/serve/langgraph-peer.ts
 *   # BENCH_SESSIONS (1000), BENCH_LATENCY_MS (1000), BENCH_STEPS (0), BENCH_STORES (sqlite,postgres),
 *   # BENCH_PRIMED=1, BENCH_BACKLOG (4096), BENCH_ADMIN_URL (postgres://postgres@127.0.0.1:5432/test),
 *   # BENCH_PEER (langgraph | floor)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import { startFakeProvider } from "../../testing/fake-provider/index.js";
import { CODE_RUN, RUNS_BUILT } from "./built-server.js";
import {
  type BenchDatabase,
  benchDatabase,
  delay,
  eachStore,
  failureCode,
  measureWindow,
  percentile,
  pool,
  serveScript,
} from "./process-cpu.js";
import { serveThreadMessages } from "./thread-endpoint.js";

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 1000);
const STEPS = Number(process.env.BENCH_STEPS ?? 0);
const STORES = (process.env.BENCH_STORES ?? "sqlite,postgres").split(",");
const PRIMED = process.env.BENCH_PRIMED === "1";
const WARM = 20;
/** BENCH_BACKLOG: the endpoint's listen backlog (default 4096, `bdsh serve`'s default). */
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 4096);
const SELF = fileURLToPath(import.meta.url);
/** BENCH_PEER: which server answers, LangGraph.js (default) or the floor (./floor-server.ts). */
const PEER = process.env.BENCH_PEER === "floor" ? "floor" : "langgraph";
if (PEER === "floor" && STEPS !== 0)
  throw new Error("BENCH_PEER=floor runs one-reply turns only (BENCH_STEPS=0)");

// ---------------------------------------------------------------------------------------------------------
// The server process: `node <this file compiled> serve` with LG_STORE, LG_DATABASE, LG_MODEL_URL.

async function serve(): Promise<void> {
  if (process.env.LG_PEER === "floor") {
    const { serveFloor } = await import("./floor-server.js");
    await serveFloor(BACKLOG);
    return;
  }
  const [{ createReactAgent }, { ChatOpenAI }, { tool }, { z }] = await Promise.all([
    import("@langchain/langgraph/prebuilt"),
    import("@langchain/openai"),
    import("@langchain/core/tools"),
    import("zod"),
  ]);
  const database = process.env.LG_DATABASE!;
  let checkpointer: import("@langchain/langgraph").BaseCheckpointSaver;
  let closeStore: () => Promise<void>;
  if (process.env.LG_STORE === "postgres") {
    const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
    const saver = PostgresSaver.fromConnString(database);
    await saver.setup();
    checkpointer = saver;
    closeStore = () => saver.end();
  } else {
    const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
    const saver = SqliteSaver.fromConnString(database);
    checkpointer = saver;
    closeStore = async () => {
      saver.db.close();
    };
  }
  const read = tool(async ({ file_path }: { file_path: string }) => readFileSync(file_path, "utf8"), {
    name: "read",
    description: "Read a text file.",
    schema: z.object({ file_path: z.string() }),
  });
  const llm = new ChatOpenAI({
    model: "fake-model",
    apiKey: "bench",
    maxRetries: 0,
    configuration: { baseURL: `${process.env.LG_MODEL_URL}/v1` },
  });
  const agent = createReactAgent({ llm, tools: [read], checkpointSaver: checkpointer });

  await serveThreadMessages({
    backlog: BACKLOG,
    close: closeStore,
    async turn(thread, text) {
      // streamMode "messages" streams the model's reply token by token (the fake provider speaks SSE only).
      // ChatOpenAI's own `streaming: true` would instead, on every call, count the prompt's tokens with
      // js-tiktoken, whose encoding it fetches from the network (here unreachable: every turn hangs).
      let parts = 0;
      for await (const _ of await agent.stream(
        { messages: [{ role: "user", content: text }] },
        { configurable: { thread_id: thread }, streamMode: "messages" },
      ))
        parts++;
      return { parts };
    },
  });
}

// ---------------------------------------------------------------------------------------------------------
// The bench: the fake provider, the server process, the clients.

type Peer = { child: ChildProcess; url: string; exited: Promise<unknown> };

/** Set once per run by `main`. */
let serverArgv: string[] = [];

/** The argv that runs this file's server: compiled to JavaScript, or through tsx (BENCH_SOURCES=1). */
function peerServerArgv(): string[] {
  if (!RUNS_BUILT) return ["--import", "tsx", SELF, "serve"];
  const outfile = fileURLToPath(new URL("../.work/langgraph-peer.mjs", import.meta.url));
  // floor-server.ts is bundled in (its imports stay external), so both peers run compiled.
  buildSync({
    entryPoints: [SELF],
    outfile,
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
  });
  return [outfile, "serve"];
}

function startPeer(env: Record<string, string>): Promise<Peer> {
  const child = spawn(process.execPath, serverArgv, {
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening (http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve({ child, url, exited });
    });
    void exited.then((code) => reject(new Error(`peer exited ${code} before listening: ${err}`)));
  });
}

async function send(url: string, text: string): Promise<void> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${body.slice(0, 200)}`);
}

type Result = {
  store: string;
  threads: number;
  completed: number;
  dropped: Record<string, number>;
  /** Connections the kernel's full listen queues turned away in the window (machine-wide). */
  overflows: number;
  wallS: number;
  idealS: number;
  cpuMs: number;
  cpuPerTurnMs: number;
  cpuPct: number;
  postgresPct: number;
  benchPct: number;
  p50: number;
  p95: number;
  max: number;
  peakRssMb: number;
  hwmMb: number;
  baseRssMb: number;
  transactionsPerTurn: number;
};

let currentWorkspace = "";

async function runOne(store: "sqlite" | "postgres", fakeUrl: string): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), `bdsh-bench-langgraph-${store}-`));
  const workspace = join(dir, "ws");
  currentWorkspace = workspace;
  mkdirSync(workspace);
  writeFileSync(join(workspace, "notes.txt"), "a small file the task reads\n");
  const database: BenchDatabase | undefined =
    store === "postgres" ? await benchDatabase(ADMIN_URL, "bdsh_bench_langgraph") : undefined;
  let peer: Peer | undefined;
  try {
    peer = await startPeer({
      LG_STORE: store,
      LG_DATABASE: database?.url ?? join(dir, "checkpoints.db"),
      LG_MODEL_URL: fakeUrl,
      LG_PEER: PEER,
    });
    const pid = peer.child.pid!;
    const base = peer.url;
    await pool(
      Array.from({ length: WARM }, (_, i) => i),
      WARM,
      (i) => send(`${base}/threads/warm-${i}/messages`, "WARM up"),
    );
    const ids = Array.from({ length: SESSIONS }, (_, i) => `t-${i}`);
    if (PRIMED) await pool(ids, 64, (id) => send(`${base}/threads/${id}/messages`, "WARM prime"));
    await delay(2_000);
    const xact0 = (await database?.baseline()) ?? 0;
    const window = measureWindow(pid, { postgres: store === "postgres" });
    const dropped: Record<string, number> = {};
    const latencies: number[] = [];
    const t0 = performance.now();
    let last = t0;
    await Promise.all(
      ids.map(async (id) => {
        const sent = performance.now();
        try {
          await send(`${base}/threads/${id}/messages`, `run the task (${STEPS} steps)`);
          last = Math.max(last, performance.now());
          latencies.push(performance.now() - sent);
        } catch (error) {
          const code = failureCode(error);
          dropped[code] = (dropped[code] ?? 0) + 1;
        }
      }),
    );
    const m = window.stop();
    // The transactions once the server (and its pool) is gone.
    peer.child.kill("SIGTERM");
    await peer.exited;
    const transactions = database ? (await database.transactionsAfterClose()) - xact0 : 0;
    latencies.sort((a, b) => a - b);
    return {
      store,
      threads: ids.length,
      completed: latencies.length,
      dropped,
      overflows: m.listenOverflows,
      wallS: (last - t0) / 1000,
      idealS: ((STEPS + 1) * LATENCY_MS) / 1000,
      cpuMs: m.cpuMs,
      cpuPerTurnMs: m.cpuMs / ids.length,
      cpuPct: (100 * m.cpuMs) / m.windowMs,
      postgresPct: (100 * m.postgresMs) / m.windowMs,
      benchPct: (100 * m.benchMs) / m.windowMs,
      p50: Math.round(percentile(latencies, 50)),
      p95: Math.round(percentile(latencies, 95)),
      max: Math.round(latencies.at(-1) ?? Number.NaN),
      peakRssMb: m.peakRssKb / 1024,
      hwmMb: m.hwmKb / 1024,
      baseRssMb: m.baseRssKb / 1024,
      transactionsPerTurn: transactions / ids.length,
    };
  } finally {
    if (peer && peer.child.exitCode === null && peer.child.signalCode === null) {
      peer.child.kill("SIGKILL");
      await peer.exited;
    }
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  serverArgv = peerServerArgv();
  const fake = await startFakeProvider({
    script: serveScript({ workspace: () => currentWorkspace, steps: STEPS, latencyMs: LATENCY_MS }),
  });
  const results: Result[] = await eachStore(STORES, fake, runOne);
  const f = (n: number, d = 1) => n.toFixed(d);
  console.log(
    `\n${PEER === "floor" ? "The floor (bench/serve/floor-server.ts)" : "LangGraph.js createReactAgent behind node:http"}, one process: ${SESSIONS} threads at once${PRIMED ? " (each with a first turn already)" : ""}, ${STEPS} tool step(s) + 1 text reply each, fake provider ${LATENCY_MS} ms/reply, ${RUNS_BUILT ? "compiled by esbuild" : CODE_RUN}`,
  );
  console.log(
    "| store | threads | completed | dropped | listen overflows | wall s (ideal) | server CPU s | CPU ms per turn | server CPU, % of one core | postgres CPU % | PG transactions per turn | bench CPU % | turn p50 ms | p95 ms | max ms | RSS before → peak MB (VmHWM) |",
  );
  console.log(
    "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const r of results) {
    const drops = Object.entries(r.dropped);
    console.log(
      `| ${r.store} | ${r.threads} | ${r.completed} | ${drops.length ? drops.map(([k, v]) => `${k} ${v}`).join(", ") : "0"} | ${r.overflows} | ${f(r.wallS, 2)} (${f(r.idealS, 2)}) | ${f(r.cpuMs / 1000, 2)} | ${f(r.cpuPerTurnMs, 2)} | ${f(r.cpuPct)} % | ${r.store === "postgres" ? `${f(r.postgresPct)} %` : "—"} | ${r.store === "postgres" ? f(r.transactionsPerTurn, 2) : "—"} | ${f(r.benchPct)} % | ${r.p50} | ${r.p95} | ${r.max} | ${f(r.baseRssMb)} → ${f(r.peakRssMb)} (${f(r.hwmMb)}) |`,
    );
  }
}

if (process.argv[2] === "serve") await serve();
else await main();
