/**
 * What opening one session's agent costs a server, in process: `openAgent` (the standard composition, as
 * `bdsh serve` opens a session it claims: the server's one redactor, children driven by its runner) for an
 * existing session, then `agent.open()` (R1 repair, the
 * session's events read, every plugin set up) and `close()`, N times over N sessions, on SQLite. CPU per
 * open from `process.cpuUsage()`; no model request is made. With BENCH_PROFILE=<file>, a CPU profile of
 * the measured opens is written there (Chrome DevTools format), and the top self-time functions printed.
 *
 * It loads the built modules (`dist/`, what an installed `bdsh` runs; build first) unless BENCH_SOURCES=1,
 * which loads the sources through tsx (./built-server.ts says why the figures differ); BDSH_TEST_MAIN=<another
 * build's dist/cli/main.js> loads that build's modules (a before/after in one run).
 *
 *   npm run build && node --import tsx bench/serve/agent-open.ts           (BENCH_OPENS=200)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtModule, CODE_RUN, RUNS_BUILT, requireBuild } from "./built-server.js";

requireBuild();
/** A module of the code under test: the build's, or the source's (BENCH_SOURCES=1). */
const load = <M>(path: string): Promise<M> =>
  import(RUNS_BUILT ? builtModule(path) : `../../src/${path}`) as Promise<M>;
const [{ DEFAULT_CONFIG }, { openAgent, secretRedactor }, { openStore }] = await Promise.all([
  load<typeof import("../../src/config/schema.js")>("config/schema.ts"),
  load<typeof import("../../src/presets/open-agent.js")>("presets/open-agent.ts"),
  load<typeof import("../../src/store/open-store.js")>("store/open-store.ts"),
]);

const OPENS = Number(process.env.BENCH_OPENS ?? 200);
const PROFILE = process.env.BENCH_PROFILE;

const home = mkdtempSync(join(tmpdir(), "bdsh-bench-open-"));
const workspace = mkdtempSync(join(tmpdir(), "bdsh-bench-open-ws-"));
const store = await openStore({ home });
const env = { DEEPSEEK_API_KEY: "bench", PATH: process.env.PATH };
const config = { ...DEFAULT_CONFIG, model: { ...DEFAULT_CONFIG.model, base_url: "http://127.0.0.1:9" } };
// As the server opens agents: its one redactor, and a runner that finds orphaned children by itself.
const redactor = secretRedactor(env, config);
const children = { findsOrphans: true, wake: () => undefined, cancel: async () => undefined };

async function openOnce(sessionId: string): Promise<void> {
  const { agent } = await openAgent({
    store,
    config,
    workspace,
    home,
    env,
    sessionId,
    projectTrusted: false,
    redactor,
    children,
  });
  await agent.open();
  await agent.close();
}

const ids: string[] = [];
for (let i = 0; i < OPENS + 20; i += 1) ids.push((await store.createSession({ title: `s${i}` })).id);
for (const id of ids.slice(0, 20)) await openOnce(id); // warm-up: modules loaded, JIT warm

const profiler = PROFILE ? new Session() : undefined;
if (profiler) {
  profiler.connect();
  await profiler.post("Profiler.enable");
  await profiler.post("Profiler.start");
}
const cpu = process.cpuUsage();
const started = performance.now();
for (const id of ids.slice(20)) await openOnce(id);
const wall = performance.now() - started;
const used = process.cpuUsage(cpu);
console.log(
  `agent open + close, SQLite, ${CODE_RUN}, ${OPENS} sessions: ${((used.user + used.system) / 1000 / OPENS).toFixed(2)} ms CPU ` +
    `per open (user ${(used.user / 1000 / OPENS).toFixed(2)}, system ${(used.system / 1000 / OPENS).toFixed(2)}), ` +
    `${(wall / OPENS).toFixed(2)} ms wall`,
);
if (profiler && PROFILE) {
  const { profile } = await profiler.post("Profiler.stop");
  writeFileSync(PROFILE, JSON.stringify(profile));
  const self = new Map<string, number>();
  const dt = profile.timeDeltas ?? [];
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  (profile.samples ?? []).forEach((id, i) => {
    const node = byId.get(id)!;
    const f = node.callFrame;
    const key = `${f.functionName || "(anon)"} ${f.url.replace(/^.*\/(src|node_modules)\//, "$1/")}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`${((100 * us) / total).toFixed(1).padStart(5)} %  ${key}`);
}
await store.close();
rmSync(home, { recursive: true, force: true });
rmSync(workspace, { recursive: true, force: true });
