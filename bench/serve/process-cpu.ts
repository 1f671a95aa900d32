/**
 * The serve benches' measures of server cost, shared by many-sessions.ts and langgraph-peer.ts so both sides
 * of a comparison are measured the same way: a process's CPU from /proc, PostgreSQL's backends' CPU, RSS,
 * and a fresh PostgreSQL database whose transactions (pg_stat_database) are read once the server is gone.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import type { FakeReply, FakeRequest } from "../../testing/fake-provider/index.js";

/** utime + stime of a process, in ms (clock ticks of 10 ms); `sys`: stime alone; 0 once it is gone. */
export function cpuMs(pid: number, part: "all" | "sys" = "all"): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((part === "sys" ? 0 : Number(fields[11])) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * The kernel's count of connections a full listen queue turned away (TcpExt ListenOverflows, machine-wide,
 * from /proc/net/netstat): with tcp_abort_on_overflow 0 the client is not told, it resends its SYN, so an
 * overflow shows as a late connection at the client, not an error.
 */
export function listenOverflows(): number {
  const lines = readFileSync("/proc/net/netstat", "utf8").split("\n");
  const at = lines.findIndex((line) => line.startsWith("TcpExt:"));
  const names = lines[at]!.split(" ");
  const values = lines[at + 1]!.split(" ");
  return Number(values[names.indexOf("ListenOverflows")]);
}

/** CPU of every `postgres` process on this machine, in ms. */
export function postgresCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") total += cpuMs(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return total;
}

/** The main thread's time on a CPU and waiting in the run queue for one, in ms (/proc/<pid>/schedstat). */
export function schedMs(pid: number): { run: number; wait: number } {
  const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, "utf8").trim().split(" ").map(Number);
  return { run: run! / 1e6, wait: wait! / 1e6 };
}

export function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
}

export const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : Number.NaN;

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>) {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/** The code a failed request failed with (ECONNRESET, ECONNREFUSED, UND_ERR_CONNECT_TIMEOUT, HTTP 500, …). */
export function failureCode(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code ?? (error instanceof Error ? error.message.slice(0, 40) : String(error));
}

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fresh database for one run, made through `adminUrl`'s server and dropped by `drop()`. */
export type BenchDatabase = {
  name: string;
  url: string;
  /** Committed + rolled back transactions in the database so far. */
  transactions(): Promise<number>;
  /**
   * The count before a measured window, once idle backends have reported: PostgreSQL 15 flushes an idle
   * backend's pending counts within PGSTAT_IDLE_INTERVAL (10 s), so a read sooner misses the set-up's last ones
   * and they would land in the window.
   */
  baseline(): Promise<number>;
  /**
   * The transactions once every connection to the database has gone (the server's pool closed, its process
   * ended): a backend reports its counts when it exits, so a count read while the pool is open misses some.
   */
  transactionsAfterClose(): Promise<number>;
  drop(): Promise<void>;
};

export async function benchDatabase(adminUrl: string, prefix: string): Promise<BenchDatabase> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const transactions = async () =>
    Number(
      (
        await admin.query<{ n: string }>(
          "SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1",
          [name],
        )
      ).rows[0]!.n,
    );
  return {
    name,
    url: url.toString(),
    transactions,
    async baseline() {
      await delay(11_000);
      return transactions();
    },
    async transactionsAfterClose() {
      const until = Date.now() + 60_000;
      for (;;) {
        const { rows } = await admin.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1",
          [name],
        );
        if (Number(rows[0]!.n) === 0) break;
        if (Date.now() > until) throw new Error(`${name}: connections still open after 60 s`);
        await delay(100);
      }
      await delay(600); // a backend's last report may trail its exit from pg_stat_activity
      return transactions();
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * Runs `runOne` for each store in turn against one fake provider (closed after), writing each result as a
 * JSON line on stderr as it comes: the outer loop both serve benches share.
 */
export async function eachStore<R>(
  stores: readonly string[],
  fake: { url: string; close(): Promise<void> },
  runOne: (store: "sqlite" | "postgres", fakeUrl: string) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  try {
    for (const store of stores) {
      const result = await runOne(store as "sqlite" | "postgres", fake.url);
      results.push(result);
      process.stderr.write(`${JSON.stringify(result)}\n`);
    }
  } finally {
    await fake.close();
  }
  return results;
}

/**
 * The serve load both benches give the fake provider: a turn whose message says WARM is answered at once;
 * any other takes `steps` `read` calls of notes.txt in the workspace, then "done", each reply after
 * `latencyMs`. The turn's task is the last user message (a primed session's history holds its WARM turn).
 */
export function serveScript(options: { workspace: () => string; steps: number; latencyMs: number }) {
  return async (request: FakeRequest): Promise<FakeReply> => {
    const messages = (request.body?.messages ?? []) as Array<{ role: string; content?: unknown }>;
    const last = messages.findLastIndex((m) => m.role === "user");
    const warm = String(messages[last]?.content ?? "").includes("WARM");
    if (!warm) await delay(options.latencyMs);
    const done = messages.slice(last + 1).filter((m) => m.role === "tool").length;
    if (warm || done >= options.steps) return { text: "done" };
    const file_path = join(options.workspace(), "notes.txt");
    return { toolCalls: [{ id: `c${done}`, name: "read", arguments: { file_path } }] };
  };
}

/** What a server cost over a measured window (see `measureWindow`). */
export type WindowMeasure = {
  windowMs: number;
  /** The server's CPU (utime + stime) and its kernel part, ms. */
  cpuMs: number;
  sysMs: number;
  /** The server's main thread: on a CPU, and runnable but waiting for one, ms. */
  mainRunMs: number;
  mainWaitMs: number;
  /** This process's CPU (the clients and the fake provider), ms. */
  benchMs: number;
  /** Every PostgreSQL process's CPU, ms (0 when not measured). */
  postgresMs: number;
  listenOverflows: number;
  baseRssKb: number;
  peakRssKb: number;
  hwmKb: number;
};

/** Starts measuring server `pid`; `stop()` ends the window and gives what it cost. */
export function measureWindow(pid: number, options: { postgres: boolean }): { stop(): WindowMeasure } {
  const baseRssKb = statusKb(pid, "VmRSS");
  const cpu0 = cpuMs(pid);
  const sys0 = cpuMs(pid, "sys");
  const sched0 = schedMs(pid);
  const own0 = process.cpuUsage();
  const pg0 = options.postgres ? postgresCpuMs() : 0;
  const overflows0 = listenOverflows();
  const t0 = performance.now();
  let peakRssKb = baseRssKb;
  const sampler = setInterval(() => {
    peakRssKb = Math.max(peakRssKb, statusKb(pid, "VmRSS"));
  }, 100);
  return {
    stop() {
      const sched1 = schedMs(pid);
      const own = process.cpuUsage(own0);
      const measure: WindowMeasure = {
        cpuMs: cpuMs(pid) - cpu0,
        sysMs: cpuMs(pid, "sys") - sys0,
        mainRunMs: sched1.run - sched0.run,
        mainWaitMs: sched1.wait - sched0.wait,
        benchMs: (own.user + own.system) / 1000,
        postgresMs: options.postgres ? postgresCpuMs() - pg0 : 0,
        listenOverflows: listenOverflows() - overflows0,
        windowMs: performance.now() - t0,
        baseRssKb,
        peakRssKb,
        hwmKb: statusKb(pid, "VmHWM"),
      };
      clearInterval(sampler);
      return measure;
    },
  };
}
