/**
 * Store benchmark (issue 2 item 7): 10,000 steps of 5 realistic events, one append (one transaction) per
 * step, then the whole session read back and projected to its surface (C1). Prints per-step append latency
 * p50/p99 and read+project time for SQLite (synchronous FULL and NORMAL, a file in a tmp dir) and
 * PostgreSQL (`DATABASE_URL`, default postgres://postgres@127.0.0.1:5432/test, in a fresh schema dropped afterwards).
 *
 *   node --import tsx bench/store/run.ts [steps]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { type NewEvent, newEvent } from "../../src/log/events.js";
import { surfaceOf } from "../../src/log/surface.js";
import { PostgresStore } from "../../src/store/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import type { Store } from "../../src/store/store.js";

const STEPS = Number(process.argv[2] ?? 10_000);
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

type Result = {
  store: string;
  p50: number;
  p99: number;
  appendTotalMs: number;
  readMs: number;
  projectMs: number;
  events: number;
  nodes: number;
};

const RESULT_TEXT = `${"drwxr-xr-x  2 user user  4096 Jan  1 12:00 src\n".repeat(6)}exit code 0 — listing complete`;

function stepEvents(turn: number, step: number): NewEvent[] {
  const where = { turn, step };
  const callId = `call_${turn}_${step}`;
  const args = `{"command": "ls -la src/${step}",  "timeout":30}`;
  return [
    newEvent("step/start", {}, where),
    newEvent(
      "assistant/message",
      {
        blocks: [
          { type: "text", text: `Let me look at the directory for step ${step} before editing anything.` },
          { type: "tool-call", id: callId, name: "terminal", arguments: args },
        ],
        provider: "deepseek",
        model: "deepseek-chat",
        finish: "tool-calls",
        usage: { inputTokens: 1200 + step, outputTokens: 48, cacheReadTokens: 1024, cacheWriteTokens: 0 },
      },
      where,
    ),
    newEvent("tool/call", { callId, name: "terminal", arguments: args }, where),
    newEvent("tool/result", { callId, name: "terminal", text: RESULT_TEXT, durationMs: 12 }, where),
    newEvent("step/end", { result: "continue" }, where),
  ];
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(name: string, store: Store): Promise<Result> {
  await store.migrate();
  const session = await store.createSession({ title: "bench" });
  await store.append(session.id, [newEvent("system/message", { text: "You are a coding agent." })], 0);
  let seq = 1;
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < STEPS; i++) {
    const events = stepEvents(Math.floor(i / 20) + 1, i);
    const t0 = performance.now();
    await store.append(session.id, events, seq);
    latencies.push(performance.now() - t0);
    seq += events.length;
  }
  const appendTotalMs = performance.now() - started;
  const t1 = performance.now();
  const events = await store.read(session.id);
  const t2 = performance.now();
  const nodes = surfaceOf(events).length;
  const t3 = performance.now();
  latencies.sort((a, b) => a - b);
  return {
    store: name,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    appendTotalMs,
    readMs: t2 - t1,
    projectMs: t3 - t2,
    events: events.length - 1,
    nodes,
  };
}

async function sqlite(synchronous: "full" | "normal"): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), "bdsh-bench-"));
  const store = new SqliteStore(join(dir, "bdsh.db"), { synchronous });
  try {
    return await measure(`sqlite (synchronous=${synchronous.toUpperCase()})`, store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(): Promise<Result> {
  const schema = `bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(DATABASE_URL);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const store = new PostgresStore({ connectionString: url.toString(), applicationName: "bdsh-bench" });
  try {
    const { rows } = await admin.query<{ synchronous_commit: string }>("SHOW synchronous_commit");
    return await measure(`postgres (synchronous_commit=${rows[0]!.synchronous_commit})`, store);
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

const ms = (n: number) => n.toFixed(3);
const results = [await sqlite("full"), await sqlite("normal"), await postgres()];
console.log(`store bench: ${STEPS} steps × 5 events, one append per step; node ${process.version}\n`);
const header = [
  "store",
  "append p50 ms",
  "append p99 ms",
  "append total s",
  "events",
  "read ms",
  "project ms",
  "read+project ms",
];
const rows = results.map((r) => [
  r.store,
  ms(r.p50),
  ms(r.p99),
  (r.appendTotalMs / 1000).toFixed(2),
  String(r.events),
  r.readMs.toFixed(1),
  r.projectMs.toFixed(1),
  (r.readMs + r.projectMs).toFixed(1),
]);
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
console.log(line(header));
console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
for (const r of rows) console.log(line(r));
