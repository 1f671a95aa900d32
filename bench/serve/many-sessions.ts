/**
 * Many sessions on one server (issue 16 acceptance): one real `bdsh serve` drives SESSIONS sessions at once
 * against the fake provider, whose every reply starts after LATENCY_MS (default 1 s). The aim: the provider's
 * latency is the bottleneck, not the server (wall time close to LATENCY_MS × replies per turn, server CPU
 * under 50 % of one core over the window). Run on SQLite (a file under a tmp BDSH_HOME) and on PostgreSQL (a
 * fresh database from `BENCH_ADMIN_URL`, default postgres://postgres@127.0.0.1:5432/test, dropped after).
 *
 * - The server may drive every session at once: `server.max_running_per_server` and
 *   `server.max_sessions_per_server` are set above SESSIONS (defaults 100 and 1,000).
 * - Warm-up outside the clock: WARM sessions each run one turn answered at once (first agent open, JIT,
 *   pools, the title side request's path).
 * - SESSIONS sessions are created over the HTTP API without a message (outside the clock), then each is sent
 *   one message, all at once (`POST /v1/sessions/:id/messages`). The turn is STEPS `read` tool calls, then a
 *   short text reply: STEPS + 1 model replies, each after LATENCY_MS. The clock runs from the first message
 *   sent to the last `turn/end` stored.
 * - Server CPU: utime + stime of the server process from /proc/<pid>/stat (all its threads: V8's collector
 *   and compiler, libuv's pool) before the first message and after the last `turn/end`, as % of one core
 *   over the window. PostgreSQL's backends are reported apart. Peak RSS: the highest VmRSS sampled every
 *   100 ms in the window (and VmHWM, the process's peak since start).
 * - Turn latency: message sent (client clock) → the session's `turn/end` `at` (server clock, same machine).
 * - Dropped: messages whose request failed at the client (ECONNRESET, ECONNREFUSED, a connect timeout, …).
 * - PostgreSQL transactions (pg_stat_database of the fresh database) from before the clock, once idle
 *   backends have reported, to after the server and the bench's reader are gone (./process-cpu.ts).
 * - The same load on a LangGraph.js agent: ./langgraph-peer.ts (the same measures, from ./process-cpu.ts).
 *
 * The server is the built CLI (`dist/cli/main.js`, what an installed `bdsh` runs), so build first; the bench
 * refuses a missing or stale build (./built-server.ts). BENCH_SOURCES=1 runs the sources through tsx instead.
 *
 *   npm run build && node --import tsx bench/serve/many-sessions.ts
 *   # BENCH_SESSIONS (1000), BENCH_LATENCY_MS (1000), BENCH_STEPS (0), BENCH_STORES (sqlite,postgres),
 *   # BENCH_BACKLOG=N sets server.backlog (511: Node's default, the value before the key existed),
 *   # BENCH_TITLES=0 turns the title side request off (session.titles: false),
 *   # BENCH_PRIMED=1 caches every agent with a first turn outside the clock, BENCH_NO_FSYNC=1 turns the stores'
 *   # fsync at durability points off (store.sqlite_synchronous normal, store.postgres_synchronous_commit off),
 *   # BENCH_SOURCES=1 runs the sources through tsx instead of dist/cli/main.js, BDSH_TEST_MAIN=<main.js> another build,
 *   # BENCH_PROFILE=<dir> writes a --cpu-prof of each server there (SIGTERM at the end, so it is flushed),
 *   # BENCH_NODE_ARGS="--max-semi-space-size=64" runs the server's node with those flags,
 *   # BENCH_WARM (20) sets how many warm-up sessions run first.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { post, type ServeProcess, startServe } from "../../test/chaos/serve-process.js";
import { startFakeProvider } from "../../testing/fake-provider/index.js";
import { CODE_RUN, RUNS_BUILT, requireBuild } from "./built-server.js";
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

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 1000);
const STEPS = Number(process.env.BENCH_STEPS ?? 0);
const STORES = (process.env.BENCH_STORES ?? "sqlite,postgres").split(",");
const PROFILE_DIR = process.env.BENCH_PROFILE;
/** BENCH_NODE_ARGS: flags for the server's node (space-separated), to try V8 settings against the default. */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
/** BENCH_WARM: warm-up sessions before the clock (more leaves less of V8's compiling inside it). */
const WARM = Number(process.env.BENCH_WARM ?? 20);
/** BENCH_NO_FSYNC=1: `store.sqlite_synchronous: normal` and `store.postgres_synchronous_commit: off` (what the durability points cost). */
const NO_FSYNC = process.env.BENCH_NO_FSYNC === "1";
/** BENCH_PRIMED=1: each session first runs one turn answered at once (outside the clock), so the clock sees agents already cached. */
const PRIMED = process.env.BENCH_PRIMED === "1";
/** BENCH_TITLES=0: `session.titles: false` (what a new session's title side request costs). */
const NO_TITLES = process.env.BENCH_TITLES === "0";
/** BENCH_BACKLOG=N: `server.backlog` (default: the key's default, 4096; 511 is Node's own default). */
const BACKLOG = process.env.BENCH_BACKLOG;
/** Both limits above SESSIONS + WARM, so every session may drive at once and stay cached. */
const LIMIT = 4 * (SESSIONS + WARM);

/** The stored events the bench reads, on either store. */
type EventReader = {
  /** Sessions among `ids` with at least `turns` (default 1) `turn/end` events. */
  ended(ids: string[], turns?: number): Promise<number>;
  turnEnds(ids: string[]): Promise<Array<{ session_id: string; at: string; data: string }>>;
  close(): Promise<void>;
};

function sqliteReader(file: string): EventReader {
  let db: Database.Database | undefined;
  const open = () => {
    db ??= new Database(file, { readonly: true, fileMustExist: true });
    return db;
  };
  const ends = `SELECT session_id, at, data, row_number() OVER (PARTITION BY session_id ORDER BY seq DESC) AS back,
    count(*) OVER (PARTITION BY session_id) AS n FROM events
    WHERE type = 'turn/end' AND session_id IN (SELECT value FROM json_each(?))`;
  return {
    ended: async (ids, turns = 1) =>
      Number(
        (
          open()
            .prepare(`SELECT count(*) AS n FROM (${ends}) WHERE back = 1 AND n >= ?`)
            .get(JSON.stringify(ids), turns) as { n: number }
        ).n,
      ),
    turnEnds: async (ids) =>
      open()
        .prepare(`SELECT session_id, at, data FROM (${ends}) WHERE back = 1`)
        .all(JSON.stringify(ids)) as Array<{ session_id: string; at: string; data: string }>,
    close: async () => {
      db?.close();
    },
  };
}

function postgresReader(url: string): EventReader {
  const client = new pg.Client({ connectionString: url });
  const connected = client.connect();
  return {
    ended: async (ids, turns = 1) => {
      await connected;
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM (SELECT session_id FROM events WHERE type = 'turn/end' AND session_id = ANY($1)
         GROUP BY session_id HAVING count(*) >= $2) s`,
        [ids, turns],
      );
      return Number(rows[0]!.n);
    },
    turnEnds: async (ids) => {
      await connected;
      const { rows } = await client.query<{ session_id: string; at: string; data: string }>(
        `SELECT DISTINCT ON (session_id) session_id, at, data FROM events
         WHERE type = 'turn/end' AND session_id = ANY($1) ORDER BY session_id, seq DESC`,
        [ids],
      );
      return rows;
    },
    close: () => client.end(),
  };
}

type Result = {
  store: string;
  sessions: number;
  completed: number;
  /** Messages whose request failed at the client, by code (ECONNRESET, ECONNREFUSED, a connect timeout, …). */
  dropped: Record<string, number>;
  /** Connections the kernel's full listen queues turned away in the window (machine-wide). */
  overflows: number;
  cpuPerTurnMs: number;
  wallS: number;
  idealS: number;
  cpuPct: number;
  cpuMs: number;
  /** The kernel's share (stime) of the server's CPU. */
  sysShare: number;
  /** The server's main thread over the window: % on a CPU, % runnable but waiting for a CPU. */
  mainRunPct: number;
  mainWaitPct: number;
  postgresPct: number;
  /** This process (the HTTP client and the fake provider), % of one core over the window. */
  benchPct: number;
  p50: number;
  p95: number;
  max: number;
  peakRssMb: number;
  hwmMb: number;
  baseRssMb: number;
  /** The window in µs of CLOCK_MONOTONIC, to cut a server's --cpu-prof to it. */
  windowUs: [number, number];
  /** PostgreSQL: committed + rolled back transactions in the fresh database, read after the server is gone (the bench's polls included). */
  transactionsPerTurn: number;
};

async function stopServer(server: ServeProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  // SIGTERM lets --cpu-prof write its profile; SIGKILL if it lingers.
  server.child.kill(PROFILE_DIR ? "SIGTERM" : "SIGKILL");
  const timer = setTimeout(() => server.child.kill("SIGKILL"), 20_000);
  await server.exited;
  clearTimeout(timer);
}

/** The running server's workspace (the `read` calls read a file in it). */
let currentWorkspace = "";

async function runOne(store: "sqlite" | "postgres", fakeUrl: string): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), `bdsh-bench-many-${store}-`));
  const workspace = join(dir, "ws");
  currentWorkspace = workspace;
  const home = join(dir, "home"); // beside the workspace, not around it: the sandbox hides BDSH_HOME
  mkdirSync(workspace);
  mkdirSync(home);
  writeFileSync(join(workspace, "notes.txt"), "a small file the task reads\n");
  const configFile = join(dir, "config.yaml");
  writeFileSync(
    configFile,
    [
      "server:",
      "  lease_ttl_ms: 10000",
      "  sweep_interval_ms: 2000",
      "  shutdown_grace_ms: 0",
      `  max_running_per_server: ${LIMIT}`,
      `  max_sessions_per_server: ${LIMIT}`,
      ...(BACKLOG ? [`  backlog: ${BACKLOG}`] : []),
      ...(NO_FSYNC ? ["store:", "  sqlite_synchronous: normal", "  postgres_synchronous_commit: off"] : []),
      ...(NO_TITLES ? ["session:", "  titles: false"] : []),
      "continuation:",
      "  announced_action: false",
      "  open_todos: false",
      "",
    ].join("\n"),
  );
  const database: BenchDatabase | undefined =
    store === "postgres" ? await benchDatabase(ADMIN_URL, "bdsh_bench_many") : undefined;
  const databaseUrl = database?.url;
  let server: ServeProcess | undefined;
  let reader: EventReader | undefined;
  try {
    server = await startServe({
      ...(databaseUrl ? { databaseUrl } : {}),
      fakeUrl,
      home,
      workspace,
      configFile,
      built: RUNS_BUILT,
      nodeArgs: [
        ...NODE_ARGS,
        ...(PROFILE_DIR ? ["--cpu-prof", "--cpu-prof-dir", join(PROFILE_DIR, store)] : []),
      ],
    });
    const pid = server.child.pid!;
    reader = databaseUrl ? postgresReader(databaseUrl) : sqliteReader(join(home, "bdsh.db"));
    const base = server.url;
    const waitTurns = async (ids: string[], turns: number, timeoutMs: number) => {
      const until = Date.now() + timeoutMs;
      while ((await reader!.ended(ids, turns)) < ids.length) {
        if (Date.now() > until) throw new Error(`${store}: turns not ended within ${timeoutMs} ms`);
        await delay(100);
      }
    };
    const warm = await pool(
      Array.from({ length: WARM }, (_, i) => i),
      WARM,
      async () => String((await post(`${base}/v1/sessions`, { text: "WARM up" })).id),
    );
    await waitTurns(warm, 1, 120_000);
    const ids = await pool(
      Array.from({ length: SESSIONS }, (_, i) => i),
      64,
      async () => String((await post(`${base}/v1/sessions`, {})).id),
    );
    if (PRIMED) {
      await pool(ids, 64, (id) => post(`${base}/v1/sessions/${id}/messages`, { text: "WARM prime" }));
      await waitTurns(ids, 1, 300_000);
    }
    await delay(2_000); // let the creation's work (and any sweep) settle before the clock
    const xact0 = (await database?.baseline()) ?? 0;
    const window = measureWindow(pid, { postgres: store === "postgres" });
    const sentAt = new Map<string, number>();
    const started = Date.now();
    const hr0 = process.hrtime.bigint(); // CLOCK_MONOTONIC, the clock of a --cpu-prof's timestamps
    const dropped: Record<string, number> = {};
    const accepted: string[] = [];
    await Promise.all(
      ids.map(async (id) => {
        sentAt.set(id, Date.now());
        try {
          await post(`${base}/v1/sessions/${id}/messages`, { text: `run the task (${STEPS} steps)` });
          accepted.push(id);
        } catch (error) {
          // A refused or reset connection (a listen backlog overflowing) is counted, not fatal.
          const code = failureCode(error);
          dropped[code] = (dropped[code] ?? 0) + 1;
        }
      }),
    );
    await waitTurns(accepted, PRIMED ? 2 : 1, 600_000);
    const m = window.stop();
    const hr1 = process.hrtime.bigint();
    // The window beside the profile, to cut the profile's samples to it (both in µs of CLOCK_MONOTONIC).
    if (PROFILE_DIR) {
      // Node makes --cpu-prof-dir only when the server exits and writes its profile.
      mkdirSync(join(PROFILE_DIR, store), { recursive: true });
      writeFileSync(
        join(PROFILE_DIR, store, "window.json"),
        JSON.stringify([hr0 / 1000n, hr1 / 1000n].map(Number)),
      );
    }
    const ends = await reader.turnEnds(ids);
    await reader.close();
    // The transactions once the server and the reader are gone (their backends have reported everything).
    await stopServer(server);
    const transactions = database ? (await database.transactionsAfterClose()) - xact0 : 0;
    const latencies: number[] = [];
    let last = 0;
    let completed = 0;
    for (const row of ends) {
      const at = Date.parse(row.at);
      last = Math.max(last, at);
      latencies.push(at - sentAt.get(row.session_id)!);
      if ((JSON.parse(row.data) as { reason?: string }).reason === "completed") completed++;
    }
    latencies.sort((a, b) => a - b);
    return {
      store,
      sessions: ids.length,
      completed,
      dropped,
      overflows: m.listenOverflows,
      cpuPerTurnMs: m.cpuMs / ids.length,
      wallS: (last - started) / 1000,
      idealS: ((STEPS + 1) * LATENCY_MS) / 1000,
      cpuPct: (100 * m.cpuMs) / m.windowMs,
      cpuMs: m.cpuMs,
      sysShare: m.sysMs / m.cpuMs,
      mainRunPct: (100 * m.mainRunMs) / m.windowMs,
      mainWaitPct: (100 * m.mainWaitMs) / m.windowMs,
      postgresPct: (100 * m.postgresMs) / m.windowMs,
      benchPct: (100 * m.benchMs) / m.windowMs,
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      max: latencies.at(-1) ?? Number.NaN,
      peakRssMb: m.peakRssKb / 1024,
      hwmMb: m.hwmKb / 1024,
      baseRssMb: m.baseRssKb / 1024,
      windowUs: [Number(hr0 / 1000n), Number(hr1 / 1000n)],
      transactionsPerTurn: transactions / ids.length,
    };
  } finally {
    await reader?.close().catch(() => undefined);
    if (server) await stopServer(server);
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  requireBuild();
  const fake = await startFakeProvider({
    script: serveScript({ workspace: () => currentWorkspace, steps: STEPS, latencyMs: LATENCY_MS }),
  });
  const results: Result[] = await eachStore(STORES, fake, runOne);
  const f = (n: number, d = 1) => n.toFixed(d);
  console.log(
    `\nbdsh serve, one server: ${SESSIONS} sessions at once${PRIMED ? " (agents cached by a first turn)" : ""}${NO_FSYNC ? ", no fsync at durability points" : ""}${NO_TITLES ? ", no titles" : ""}${BACKLOG ? `, server.backlog ${BACKLOG}` : ""}, ${STEPS} tool step(s) + 1 text reply each, fake provider ${LATENCY_MS} ms/reply, ${CODE_RUN}`,
  );
  console.log(
    "| store | sessions | completed | dropped | listen overflows | wall s (ideal) | server CPU, % of one core | server CPU s (kernel share) | CPU ms per turn | PG transactions per turn | main thread on CPU / waiting for one | postgres CPU % | bench CPU % | turn p50 ms | p95 ms | max ms | RSS before → peak MB (VmHWM) |",
  );
  console.log(
    "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const r of results)
    console.log(
      `| ${r.store} | ${r.sessions} | ${r.completed} | ${
        Object.entries(r.dropped)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ") || "0"
      } | ${r.overflows} | ${f(r.wallS, 2)} (${f(r.idealS, 2)}) | ${f(r.cpuPct)} % | ${f(r.cpuMs / 1000, 2)} (${f(100 * r.sysShare, 0)} %) | ${f(r.cpuPerTurnMs, 2)} | ${r.store === "postgres" ? f(r.transactionsPerTurn, 2) : "—"} | ${f(r.mainRunPct, 0)} % / ${f(r.mainWaitPct, 0)} % | ${r.store === "postgres" ? `${f(r.postgresPct)} %` : "—"} | ${f(r.benchPct)} % | ${r.p50} | ${r.p95} | ${r.max} | ${f(r.baseRssMb)} → ${f(r.peakRssMb)} (${f(r.hwmMb)}) |`,
    );
}

await main();
