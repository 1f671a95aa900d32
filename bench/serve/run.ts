/**
 * Serve benchmark (issue 8 item 7): real `bdsh serve` processes on one PostgreSQL database (a fresh one per
 * phase, created from `BENCH_ADMIN_URL`, default postgres://postgres@127.0.0.1:5432/test, dropped after)
 * against the fake provider at 200 ms per reply.
 *
 * - Throughput: for 1, 2 and 4 servers, SESSIONS sessions are created at once through the HTTP API (round
 *   robin over the servers), each running one turn of STEPS `read` tool steps plus a final text reply
 *   (STEPS + 1 model replies). Each server drives at most CAP sessions at once
 *   (`server.max_running_per_server`); the rest wait in the inbox rows for a server with room. BENCH_SERVERS (1,2,4) the server counts,
 *   BENCH_ONLY_THROUGHPUT=1 skips the takeover and idle-memory phases. Sessions/s =
 *   sessions / (first create → last `turn/end`); step latency = `step/start` → next `step/start` (or
 *   `turn/end`), from the stored events; each server's share: the turns it ended (its /metrics). CPU per model reply, split by process: the servers, PostgreSQL's
 *   backends, and this process (the HTTP client and the fake provider).
 * - Takeover: two servers (lease TTL 3 s); a long session with a queued follow-up; SIGKILL the server
 *   driving it; time from the kill to the next `step/start` (written by the other server).
 * - Idle memory: one server; IDLE sessions each run one short turn and stay cached idle; RSS delta / IDLE.
 *
 * The servers run the built CLI (`dist/cli/main.js`, what a deployment runs), so build first (a missing or
 * stale build is refused, ./built-server.ts; BENCH_SOURCES=1 runs the sources through tsx instead):
 *
 *   npm run build && node --import tsx bench/serve/run.ts   # BENCH_SESSIONS (default 1000), BENCH_CAP (default 8), BENCH_IDLE (500)
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import {
  authFor,
  get,
  post,
  type ServeProcess,
  startServe,
  writeServeConfig,
} from "../../test/chaos/serve-process.js";
import { type FakeReply, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { RUNS_BUILT, requireBuild } from "./built-server.js";
import { cpuMs, pool, postgresCpuMs } from "./process-cpu.js";

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const CAP = Number(process.env.BENCH_CAP ?? 8);
const IDLE = Number(process.env.BENCH_IDLE ?? 500);
const STEPS = 2;
const LATENCY_MS = 200;
const LEASE_TTL_MS = 3_000;

const dir = mkdtempSync(join(tmpdir(), "bdsh-bench-serve-"));
const workspace = join(dir, "ws");
const home = join(dir, "home"); // beside the workspace, not around it: the sandbox hides BDSH_HOME
mkdirSync(workspace);
mkdirSync(home);
writeFileSync(join(workspace, "notes.txt"), "a small file the task reads\n");

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** TASK:<steps>: that many `read` steps, then the final text; every reply after LATENCY_MS (IDLE: at once). */
async function script(request: FakeRequest): Promise<FakeReply> {
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content?: unknown }>;
  const first = messages.find((m) => m.role === "user" && /TASK:\d+/.test(String(m.content)));
  const wanted = Number(/TASK:(\d+)/.exec(String(first?.content ?? ""))?.[1] ?? 0);
  const idle = messages.some((m) => m.role === "user" && String(m.content).includes("IDLE"));
  if (!idle) await delay(LATENCY_MS);
  const done = messages.filter((m) => m.role === "tool").length;
  if (done >= wanted) return { text: "done" };
  return {
    toolCalls: [{ id: `c${done}`, name: "read", arguments: { file_path: join(workspace, "notes.txt") } }],
  };
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const databases: string[] = [];
async function freshDatabase(tag: string): Promise<string> {
  const name = `bdsh_bench_serve_${tag}_${process.pid}_${Date.now().toString(36)}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  databases.push(name);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabases(): Promise<void> {
  await withAdmin(async (c) => {
    for (const name of databases.splice(0)) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
}

async function startServers(count: number, databaseUrl: string, fakeUrl: string, ttl = 10_000, cap = 100) {
  const configFile = join(dir, `config-${count}-${ttl}-${cap}.yaml`);
  writeServeConfig(configFile, {
    lease_ttl_ms: ttl,
    sweep_interval_ms: 500,
    shutdown_grace_ms: 0,
    max_running_per_server: cap,
  });
  const env = { databaseUrl, fakeUrl, home, workspace, configFile, built: RUNS_BUILT };
  return Promise.all(Array.from({ length: count }, () => startServe(env)));
}

async function stopServers(servers: ServeProcess[]): Promise<void> {
  for (const s of servers) if (s.child.exitCode === null && !s.child.killed) s.child.kill("SIGKILL");
  await Promise.all(servers.map((s) => s.exited));
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : Number.NaN;

type Throughput = {
  servers: number;
  sessions: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  completed: number;
  /** Turns each server ended in the window (`bdsh_turns_total` from its /metrics, less its warm-up turn). */
  turnsByServer: number[];
  /** CPU ms per model reply: all servers, PostgreSQL, this process (client + fake provider). */
  cpu: { servers: number; postgres: number; client: number };
};

async function throughput(servers: number, fakeUrl: string): Promise<Throughput> {
  const databaseUrl = await freshDatabase(`t${servers}`);
  const procs = await startServers(servers, databaseUrl, fakeUrl, 10_000, CAP);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    // Warm each server (first agent open, JIT, pools) outside the clock: one fast session apiece.
    await Promise.all(procs.map((p) => post(`${p.url}/v1/sessions`, { text: "IDLE warm up" })));
    const doneCount = async (ids?: string[]) =>
      Number(
        (
          await db.query<{ n: string }>(
            `SELECT count(DISTINCT session_id) AS n FROM events WHERE type = 'turn/end'${ids ? " AND session_id = ANY($1)" : ""}`,
            ids ? [ids] : [],
          )
        ).rows[0]!.n,
      );
    while ((await doneCount()) < procs.length) await delay(50);
    const serverCpu0 = procs.reduce((sum, p) => sum + cpuMs(p.child.pid!), 0);
    const postgresCpu0 = postgresCpuMs();
    const clientCpu0 = process.cpuUsage();
    const started = Date.now();
    const ids = await pool(
      Array.from({ length: SESSIONS }, (_, i) => i),
      64,
      async (i) => {
        const server = procs[i % procs.length]!;
        const session = await post(`${server.url}/v1/sessions`, { text: `TASK:${STEPS} run the steps` });
        return String(session.id);
      },
    );
    while ((await doneCount(ids)) < ids.length) await delay(100);
    const turnsByServer = await Promise.all(procs.map(async (p) => (await turnsEnded(p.url)) - 1));
    const replies = ids.length * (STEPS + 1);
    const client = process.cpuUsage(clientCpu0);
    const cpu = {
      servers: (procs.reduce((sum, p) => sum + cpuMs(p.child.pid!), 0) - serverCpu0) / replies,
      postgres: (postgresCpuMs() - postgresCpu0) / replies,
      client: (client.user + client.system) / 1000 / replies,
    };
    const { rows } = await db.query<{ session_id: string; type: string; at: string; data: string }>(
      "SELECT session_id, type, at, data FROM events WHERE type IN ('step/start', 'turn/end') AND session_id = ANY($1) ORDER BY session_id, seq",
      [ids],
    );
    let last = 0;
    let completed = 0;
    const latencies: number[] = [];
    let prev: { session: string; at: number } | undefined;
    for (const row of rows) {
      const at = Date.parse(row.at);
      if (prev && prev.session === row.session_id) latencies.push(at - prev.at);
      if (row.type === "turn/end") {
        last = Math.max(last, at);
        if ((JSON.parse(row.data) as { reason?: string }).reason === "completed") completed++;
        prev = undefined;
      } else prev = { session: row.session_id, at };
    }
    latencies.sort((a, b) => a - b);
    const seconds = (last - started) / 1000;
    return {
      servers,
      sessions: ids.length,
      seconds,
      perSecond: ids.length / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      completed,
      turnsByServer,
      cpu,
    };
  } finally {
    await db.end();
    await stopServers(procs);
  }
}

/** The turns a server has ended, every outcome: the sum of its `bdsh_turns_total` series. */
async function turnsEnded(base: string): Promise<number> {
  const response = await fetch(`${base}/metrics`, { headers: authFor(base) });
  if (!response.ok) throw new Error(`${base}/metrics: ${response.status}`);
  let total = 0;
  for (const line of (await response.text()).split("\n")) {
    const match = /^bdsh_turns_total(?:\{[^}]*\})? (\d+(?:\.\d+)?)$/.exec(line);
    if (match) total += Number(match[1]);
  }
  return total;
}

async function takeover(fakeUrl: string): Promise<{ ms: number; kills: number }> {
  const databaseUrl = await freshDatabase("takeover");
  const procs = await startServers(2, databaseUrl, fakeUrl, LEASE_TTL_MS);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const session = await post(`${procs[0]!.url}/v1/sessions`, { text: "TASK:50 a long task" });
    const id = String(session.id);
    await post(`${procs[0]!.url}/v1/sessions/${id}/messages`, { text: "TASK:1 then this" });
    let owner: string | undefined;
    for (let i = 0; i < 200 && !owner; i++) {
      const got = (await get(`${procs[0]!.url}/v1/sessions/${id}`)) as { drivenBy?: string };
      owner = got.drivenBy ?? undefined;
      if (!owner) await delay(20);
    }
    if (!owner) throw new Error("nobody drives the session");
    const pid = Number(owner.split(":").at(-2));
    const victim = procs.find((p) => p.child.pid === pid);
    if (!victim) throw new Error(`no server with pid ${pid} (${owner})`);
    await delay(700); // mid-turn: a few steps in
    const { rows: before } = await db.query<{ m: number }>(
      "SELECT coalesce(max(seq), 0) AS m FROM events WHERE session_id = $1",
      [id],
    );
    victim.child.kill("SIGKILL");
    const killedAt = Date.now();
    await victim.exited;
    for (;;) {
      const { rows } = await db.query<{ at: string }>(
        "SELECT at FROM events WHERE session_id = $1 AND seq > $2 AND type = 'step/start' ORDER BY seq LIMIT 1",
        [id, before[0]!.m],
      );
      if (rows[0]) return { ms: Date.parse(rows[0].at) - killedAt, kills: 1 };
      if (Date.now() - killedAt > 60_000) throw new Error("no takeover within 60 s");
      await delay(20);
    }
  } finally {
    await db.end();
    await stopServers(procs);
  }
}

function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
}

async function idleMemory(
  fakeUrl: string,
): Promise<{ sessions: number; beforeMb: number; afterMb: number; kbPerSession: number }> {
  const databaseUrl = await freshDatabase("idle");
  const [server] = await startServers(1, databaseUrl, fakeUrl);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    // Warm up (JIT, pools, first agent) so the delta is the sessions, not the first request.
    const warm = await pool(
      Array.from({ length: 20 }, (_, i) => i),
      20,
      async () => String((await post(`${server!.url}/v1/sessions`, { text: "IDLE warm up" })).id),
    );
    const waitDone = async (n: number) => {
      for (;;) {
        const { rows } = await db.query<{ n: string }>(
          "SELECT count(DISTINCT session_id) AS n FROM events WHERE type = 'turn/end'",
        );
        if (Number(rows[0]!.n) >= n) return;
        await delay(100);
      }
    };
    await waitDone(warm.length);
    await delay(1_000);
    const before = rssKb(server!.child.pid!);
    await pool(
      Array.from({ length: IDLE }, (_, i) => i),
      32,
      async () => String((await post(`${server!.url}/v1/sessions`, { text: "IDLE hold me" })).id),
    );
    await waitDone(warm.length + IDLE);
    await delay(1_000);
    const ready = (await (await fetch(`${server!.url}/readyz`)).json()) as { sessions?: { cached: number } };
    const after = rssKb(server!.child.pid!);
    const held = (ready.sessions?.cached ?? IDLE + warm.length) - warm.length;
    return {
      sessions: held,
      beforeMb: before / 1024,
      afterMb: after / 1024,
      kbPerSession: (after - before) / held,
    };
  } finally {
    await db.end();
    await stopServers([server!]);
  }
}

async function main(): Promise<void> {
  requireBuild();
  const fake = await startFakeProvider({ script });
  try {
    const results: Throughput[] = [];
    for (const servers of (process.env.BENCH_SERVERS ?? "1,2,4").split(",").map(Number)) {
      const r = await throughput(servers, fake.url);
      results.push(r);
      process.stderr.write(`${servers} server(s): ${r.perSecond.toFixed(1)} sessions/s\n`);
    }
    if (process.env.BENCH_ONLY_THROUGHPUT) {
      for (const r of results) console.log(JSON.stringify(r));
      return;
    }
    const taken = await takeover(fake.url);
    const idle = await idleMemory(fake.url);
    const fmt = (n: number, d = 1) => n.toFixed(d);
    console.log(
      `\nbdsh serve bench: ${SESSIONS} concurrent sessions, ${STEPS} tool steps + 1 final reply each, fake provider ${LATENCY_MS} ms/reply, at most ${CAP} driven per server`,
    );
    console.log(
      "| servers | sessions | completed | wall s | sessions/s | step p50 ms | step p99 ms | vs 1 server | CPU ms/reply: servers | postgres | client+fake | turns by server |",
    );
    console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    for (const r of results) {
      console.log(
        `| ${r.servers} | ${r.sessions} | ${r.completed} | ${fmt(r.seconds)} | ${fmt(r.perSecond)} | ${r.p50} | ${r.p99} | ${fmt(r.perSecond / results[0]!.perSecond, 2)}× | ${fmt(r.cpu.servers, 2)} | ${fmt(r.cpu.postgres, 2)} | ${fmt(r.cpu.client, 2)} | ${r.turnsByServer.join(" / ")} |`,
      );
    }
    console.log(
      `\ntakeover after SIGKILL: ${taken.ms} ms (lease TTL ${LEASE_TTL_MS} ms; bound TTL + 2 s = ${LEASE_TTL_MS + 2000} ms: ${taken.ms <= LEASE_TTL_MS + 2000 ? "within" : "OVER"})`,
    );
    console.log(
      `idle memory: ${idle.sessions} idle sessions held, RSS ${fmt(idle.beforeMb)} → ${fmt(idle.afterMb)} MB, ${fmt(idle.kbPerSession)} KB per idle session`,
    );
  } finally {
    await fake.close();
    await dropDatabases();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
