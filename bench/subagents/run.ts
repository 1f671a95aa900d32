/**
 * Subagent latency (issue 17 acceptance): what the harness adds between a launch and the child's first
 * model request, and between a child's settlement and its parent's next request.
 *
 * - SQLite, one process (the `bdsh run` path: children driven in process by LocalChildren): a parent agent
 *   on a store file under a tmp home; each round is one parent turn that launches one child (`subagent`),
 *   the child answers at once, its settlement wakes the parent, which answers at once.
 * - PostgreSQL, two real `bdsh serve` processes (the build, `dist/cli/main.js`: run `npm run build` first;
 *   BENCH_SOURCES=1 runs the sources through tsx, ../serve/built-server.ts) on a fresh database, one driving
 *   slot each, so the child is driven by the server that is not driving its parent, and the settlement wakes
 *   the parent across servers (an inbox row plus NOTIFY).
 *
 * Clock (one machine, one clock): launch = the `at` of the parent's `subagent/started` event → the fake
 * provider receiving the child's first request; settle = the `at` of the child's `subagent/settled` → the
 * fake receiving the parent's next request. `at` is millisecond ISO time, so figures are ±1 ms.
 * Baseline in the same run: a fresh session's first request after its message (serve: `POST /messages`;
 * one process: opening the agent and `followup`), the cost of starting any session, which a launch —
 * creating a session and opening its agent — cannot beat by much.
 *
 *   npm run build && node --import tsx bench/subagents/run.ts      # BENCH_ROUNDS (100), BENCH_STORES (sqlite,postgres)
 */

import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { post, type ServeProcess, startServe } from "../../test/chaos/serve-process.js";
import { openTestAgent } from "../../test/support/test-agent.js";
import { type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { RUNS_BUILT, requireBuild } from "../serve/built-server.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100);
const STORES = (process.env.BENCH_STORES ?? "sqlite,postgres").split(",");
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";

type Sample = { launch: number; settle: number };

const userText = (r: FakeRequest) =>
  ((r.body?.messages ?? []) as Array<{ role: string; content?: unknown }>)
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
    .join("\n");
const toolsAfterLastUser = (r: FakeRequest) => {
  const messages = (r.body?.messages ?? []) as Array<{ role: string }>;
  const last = messages.findLastIndex((m) => m.role === "user");
  return messages.slice(last + 1).filter((m) => m.role === "tool").length;
};

/** Answers at once: the parent launches `CHILD <n>` for `PARENT <n>`, the child answers, the parent acknowledges. */
function makeScript(arrivals: Map<string, number>) {
  return (request: FakeRequest) => {
    const now = Date.now();
    const text = userText(request);
    const child = /CHILD (\d+)/.exec(text);
    const parent = /PARENT (\d+)/.exec(text);
    if (child && !text.includes("PARENT")) {
      arrivals.set(`child:${child[1]}`, now);
      return { text: "child answer" };
    }
    const n = parent?.[1] ?? "?";
    if (text.includes("Background subagent")) {
      if (!arrivals.has(`wake:${n}`)) arrivals.set(`wake:${n}`, now);
      return { text: "acknowledged" };
    }
    if (toolsAfterLastUser(request) === 0) {
      arrivals.set(`first:${n}`, now);
      return { toolCalls: [{ id: `c${n}`, name: "subagent", arguments: { task: `CHILD ${n}: answer` } }] };
    }
    return { text: "waiting" };
  };
}

const at = (e: LogEvent | undefined) => (e ? Date.parse(e.at) : Number.NaN);

async function samplesFrom(store: Store, parentId: string, n: number, arrivals: Map<string, number>) {
  const events = await store.read(parentId);
  const started = events.find((e) => e.type === "subagent/started");
  const childId = started?.type === "subagent/started" ? started.data.childId : "";
  const settled = (await store.read(childId, { types: ["subagent/settled"] }))[0];
  return {
    launch: arrivals.get(`child:${n}`)! - at(started),
    settle: arrivals.get(`wake:${n}`)! - at(settled),
  };
}

async function untilTrue(check: () => Promise<boolean>, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function sqliteRun(): Promise<{ samples: Sample[]; baseline: number[] }> {
  const arrivals = new Map<string, number>();
  const fake = await startFakeProvider({ script: makeScript(arrivals) });
  const home = mkdtempSync(join(tmpdir(), "bdsh-bench-sa-"));
  const workspace = mkdtempSync(join(tmpdir(), "bdsh-bench-sa-ws-"));
  const store = await openStore({ home });
  const config = {
    ...DEFAULT_CONFIG,
    model: { ...DEFAULT_CONFIG.model, base_url: fake.url },
    session: { titles: false },
    sandbox_required: false,
  };
  const samples: Sample[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < ROUNDS + 5; i++) {
    const sent = Date.now(); // the baseline includes opening the agent, as a launch includes the child's
    const { agent } = await openTestAgent({
      store,
      config,
      workspace,
      home,
      approval: "never",
    });
    await agent.followup(`PARENT ${i}: delegate`);
    await untilTrue(async () => arrivals.has(`wake:${i}`));
    await agent.whenIdle();
    await agent.api("childWaiter")?.waitForChildren(agent.sessionId);
    await agent.whenIdle();
    if (i >= 5) {
      samples.push(await samplesFrom(store, agent.sessionId, i, arrivals));
      baseline.push(arrivals.get(`first:${i}`)! - sent);
    }
    await agent.close();
  }
  await store.close();
  await fake.close();
  return { samples, baseline };
}

async function postgresRun(): Promise<{ samples: Sample[]; baseline: number[] }> {
  const arrivals = new Map<string, number>();
  const fake = await startFakeProvider({ script: makeScript(arrivals) });
  const dbName = `bdsh_bench_sa_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const databaseUrl = url.toString();
  const dir = mkdtempSync(join(tmpdir(), "bdsh-bench-sa-pg-"));
  mkdirSync(join(dir, "ws"));
  mkdirSync(join(dir, "home"));
  const configFile = join(dir, "config.yaml");
  writeFileSync(
    configFile,
    "server:\n  max_running_per_server: 1\n  lease_ttl_ms: 5000\nsession:\n  titles: false\ncontinuation:\n  announced_action: false\n  open_todos: false\n",
  );
  const env = {
    databaseUrl,
    fakeUrl: fake.url,
    home: join(dir, "home"),
    workspace: join(dir, "ws"),
    configFile,
    built: RUNS_BUILT,
  };
  requireBuild();
  const servers: ServeProcess[] = [await startServe(env), await startServe(env)];
  const store = await openStore({ home: join(dir, "home"), databaseUrl });
  const samples: Sample[] = [];
  const baseline: number[] = [];
  try {
    for (let i = 0; i < ROUNDS + 5; i++) {
      const server = servers[i % 2]!;
      const session = await post(`${server.url}/v1/sessions`, { title: `round ${i}` });
      const id = String(session.id);
      const sent = Date.now();
      await post(`${server.url}/v1/sessions/${id}/messages`, { text: `PARENT ${i}: delegate` });
      await untilTrue(async () => arrivals.has(`wake:${i}`));
      await untilTrue(async () => (await store.read(id, { types: ["turn/end"] })).length >= 2);
      if (i >= 5) {
        samples.push(await samplesFrom(store, id, i, arrivals));
        baseline.push(arrivals.get(`first:${i}`)! - sent);
      }
    }
  } finally {
    for (const s of servers) s.child.kill("SIGTERM");
    await Promise.all(servers.map((s) => s.exited));
    await store.close();
    await fake.close();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  }
  return { samples, baseline };
}

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

const rows: string[] = [];
for (const store of STORES) {
  const { samples, baseline } = store === "sqlite" ? await sqliteRun() : await postgresRun();
  const launch = samples.map((s) => s.launch);
  const settle = samples.map((s) => s.settle);
  const label = store === "sqlite" ? "SQLite, one process (bdsh run)" : "PostgreSQL, two servers";
  rows.push(
    `| ${label} | ${samples.length} | ${pct(launch, 50)} / ${pct(launch, 99)} ms | ${pct(settle, 50)} / ${pct(settle, 99)} ms | ${pct(baseline, 50)} / ${pct(baseline, 99)} ms | ${(pct(launch, 50) / Math.max(1, pct(baseline, 50))).toFixed(2)} |`,
  );
  console.error(`${label}: done`);
}
console.log(
  "| store | rounds | launch → child's first request p50 / p99 | settle → parent's next request p50 / p99 | baseline: message → a fresh session's first request p50 / p99 | launch p50 / baseline p50 |",
);
console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
for (const row of rows) console.log(row);
