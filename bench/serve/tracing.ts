/**
 * Tracing cost in `bdsh serve` (issue 37): the server's CPU per turn with traces exported over OTLP/HTTP
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` set, a receiver in this process counting spans) against the same server
 * with no endpoint. One built server on SQLite per round, a fresh home each; SESSIONS sessions created at
 * once, each one turn of STEPS `read` steps and a final reply from the fake provider (no latency); the
 * server's CPU (/proc utime+stime) from the first create to the last `turn/end`, per turn. Rounds alternate
 * off/on so drift in the machine's load falls on both. The server is the build (BENCH_SOURCES=1: the sources
 * through tsx; a missing or stale build is refused, ./built-server.ts).
 *
 *   npm run build && node --import tsx bench/serve/tracing.ts   # BENCH_SESSIONS (200), BENCH_ROUNDS (3)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { post, startServe, writeServeConfig } from "../../test/chaos/serve-process.js";
import { type FakeReply, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { RUNS_BUILT, requireBuild } from "./built-server.js";
import { cpuMs } from "./process-cpu.js";

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STEPS = 2;

const dir = mkdtempSync(join(tmpdir(), "bdsh-bench-tracing-"));

let spans = 0;
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (c: Buffer) => chunks.push(c));
  request.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      resourceSpans: { scopeSpans: { spans: unknown[] }[] }[];
    };
    for (const r of body.resourceSpans) for (const s of r.scopeSpans) spans += s.spans.length;
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const endpoint = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;

async function turnsEnded(url: string, token: string): Promise<number> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  return [...text.matchAll(/^bdsh_turns_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

function script(workspace: string) {
  return (request: FakeRequest): FakeReply => {
    const messages = (request.body?.messages ?? []) as Array<{ role: string }>;
    const done = messages.filter((m) => m.role === "tool").length;
    if (done >= STEPS) return { text: "done", usage: { input: 100, cacheRead: 50, output: 5 } };
    return {
      toolCalls: [{ id: `c${done}`, name: "read", arguments: { file_path: join(workspace, "notes.txt") } }],
    };
  };
}

async function round(tracing: boolean, index: number): Promise<{ cpuPerTurn: number; spansPerTurn: number }> {
  const root = join(dir, `${tracing ? "on" : "off"}-${index}`);
  const home = join(root, "home");
  const workspace = join(root, "ws");
  mkdirSync(home, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, "notes.txt"), "a small file the task reads\n");
  const configFile = join(root, "config.yaml");
  writeServeConfig(configFile, { sweep_interval_ms: 500, shutdown_grace_ms: 0, max_running_per_server: 8 });
  const fake = await startFakeProvider({ script: script(workspace) });
  const server = await startServe({
    fakeUrl: fake.url,
    home,
    workspace,
    configFile,
    built: RUNS_BUILT,
    ...(tracing
      ? { extraEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "200" } }
      : {}),
  });
  try {
    spans = 0;
    const pid = server.child.pid!;
    const cpu0 = cpuMs(pid);
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i++)
      ids.push((await post(`${server.url}/v1/sessions`, { text: `task ${i}` })).id as string);
    // Done when the server's own turn counter says so (GET /metrics, scraped as often in both modes).
    while ((await turnsEnded(server.url, server.token)) < SESSIONS)
      await new Promise((resolve) => setTimeout(resolve, 250));
    const cpu = cpuMs(pid) - cpu0;
    if (tracing) {
      // The batch processor exports on its schedule: wait until every turn's spans arrived.
      const expected = SESSIONS * (1 + (STEPS + 1) + STEPS);
      for (let i = 0; i < 100 && spans < expected; i++) await new Promise((r) => setTimeout(r, 100));
    }
    return { cpuPerTurn: cpu / SESSIONS, spansPerTurn: spans / SESSIONS };
  } finally {
    server.child.kill("SIGKILL");
    await server.exited;
    await fake.close();
  }
}

requireBuild();
const off: number[] = [];
const on: number[] = [];
let spansPerTurn = 0;
const load = loadavg()[0]!.toFixed(2);
for (let i = 0; i < ROUNDS; i++) {
  off.push((await round(false, i)).cpuPerTurn);
  const traced = await round(true, i);
  on.push(traced.cpuPerTurn);
  spansPerTurn = traced.spansPerTurn;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `load average at start ${load}, at end ${loadavg()[0]!.toFixed(2)}; ${SESSIONS} sessions × ${ROUNDS} rounds`,
);
console.log(
  `server CPU per turn, off: ${off.map((x) => x.toFixed(2)).join(", ")} ms (median ${median(off).toFixed(2)})`,
);
console.log(
  `server CPU per turn, on:  ${on.map((x) => x.toFixed(2)).join(", ")} ms (median ${median(on).toFixed(2)})`,
);
console.log(
  `tracing on / off: ${((median(on) / median(off) - 1) * 100).toFixed(1)} % ; spans per turn ${spansPerTurn.toFixed(1)}`,
);
receiver.close();
rmSync(dir, { recursive: true, force: true });
