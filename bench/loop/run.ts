/**
 * Loop benchmark (issue 4, item 10): a 200-step session — each reply one trivial `noop` tool call with a
 * little reasoning, then a final text reply — against the fake provider at zero latency, in one process:
 *   - better-dsh (standard plugins) durable on SQLite and on PostgreSQL (`DATABASE_URL`, default
 *     postgres://postgres@127.0.0.1:5432/test; a fresh schema per session, dropped after);
 *   - the floor: a plain `fetch` loop POSTing the exact bodies better-dsh sent, reading each stream whole;
 *   - the AI SDK's `streamText` tool loop (`@ai-sdk/openai-compatible`);
 *   - pi-agent-core's `Agent` (pi-ai `openai-completions`);
 *   - diagnostics: better-dsh waiting for the disk (WAL flush, fsync) on every append (`store.sqlite_synchronous:
 *     full`, `store.postgres_synchronous_commit: on`) instead of the default `effects` (every append
 *     committed; the disk only before a side-effecting tool and at a turn's end), and on PostgreSQL with a
 *     side-effecting `noop` (the disk before every dispatch), to show what those flushes cost per step.
 * Each contender gets a fresh fake provider with the same script. A warm-up round of short sessions runs
 * first, then `rounds` rounds of every contender in fresh state; figures are the medians over the rounds.
 * Overhead = a contender's per-step time minus the floor's. Then the prefix-reuse session.
 *
 *   node --import tsx bench/loop/run.ts [steps=200] [rounds=3]
 */
import { cpus, loadavg } from "node:os";
import { runAiSdk } from "./ai-sdk.js";
import {
  assertSteps,
  median,
  medianSummary,
  type SessionRun,
  type Summary,
  sessionScript,
  summarize,
} from "./common.js";
import { runFloor } from "./floor.js";
import { type OurSession, runOurs } from "./ours.js";
import { runPi } from "./pi.js";
import { runPrefixSession } from "./prefix.js";

const STEPS = Number(process.argv[2] ?? 200);
const ROUNDS = Number(process.argv[3] ?? 3);
const WARMUP_STEPS = 20;

const NAMES = {
  floor: "floor (fetch loop)",
  sqlite: "better-dsh (SQLite, default)",
  postgres: "better-dsh (PostgreSQL)",
  aiSdk: "AI SDK streamText",
  pi: "pi-agent-core",
  sqliteFull: "[diag] ours, SQLite full",
  postgresOn: "[diag] ours, PG sync on",
  postgresEffects: "[diag] ours, PG, effect tool",
  floorNodeHttp: "[diag] floor, node:http loop",
} as const;
type Key = keyof typeof NAMES;
const OURS_CHOICE = {
  sqlite: "sqlite",
  postgres: "postgres",
  sqliteFull: "sqlite-full",
  postgresOn: "postgres-on",
  postgresEffects: "postgres-effects-tool",
} as const;
type OursKey = keyof typeof OURS_CHOICE;
const OURS = Object.keys(OURS_CHOICE) as OursKey[];
const ORDER: Key[] = [
  "floor",
  "sqlite",
  "postgres",
  "aiSdk",
  "pi",
  "sqliteFull",
  "postgresOn",
  "postgresEffects",
  "floorNodeHttp",
];

type Round = {
  summaries: Record<Key, Summary>;
  ours: Record<OursKey, OurSession>;
  lastBodyBytes: number;
};

/** One round: every contender once, each on a fresh provider (and a fresh store). */
async function round(steps: number): Promise<Round> {
  const script = sessionScript(steps);
  const sqlite = await runOurs("sqlite", script);
  const floor = await runFloor(script, sqlite.bodies);
  const postgres = await runOurs("postgres", script);
  const aiSdk = await runAiSdk(script);
  const pi = await runPi(script);
  const sqliteFull = await runOurs(OURS_CHOICE.sqliteFull, script);
  const postgresOn = await runOurs(OURS_CHOICE.postgresOn, script);
  const postgresEffects = await runOurs(OURS_CHOICE.postgresEffects, script);
  const floorNodeHttp = await runFloor(script, sqlite.bodies, "node-http");
  const ours = { sqlite, postgres, sqliteFull, postgresOn, postgresEffects };
  const runs: Record<Key, SessionRun> = { floor, floorNodeHttp, aiSdk, pi, ...ours };
  const summaries = {} as Record<Key, Summary>;
  for (const key of ORDER) {
    assertSteps(NAMES[key], runs[key], steps);
    summaries[key] = summarize(runs[key].marks);
  }
  return {
    summaries,
    ours,
    lastBodyBytes: Buffer.byteLength(sqlite.bodies.at(-1)?.rawBody ?? ""),
  };
}

const ms = (value: number): string => value.toFixed(3);
const signed = (value: number): string => `${value >= 0 ? "+" : ""}${value.toFixed(3)}`;

function printTable(results: Record<Key, Summary>): void {
  const floor = results.floor;
  const columns = [
    "contender",
    "p50",
    "p99",
    "mean",
    "total",
    "over p50",
    "over mean",
    "early p50",
    "late p50",
    "cpu/step",
    "cpu over",
  ];
  const widths = [28, 9, 9, 9, 9, 10, 11, 11, 10, 10, 10];
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i]!)).join("");
  console.log(line(columns));
  for (const key of ORDER) {
    const r = results[key];
    const isFloor = key === "floor";
    console.log(
      line([
        NAMES[key],
        ms(r.p50),
        ms(r.p99),
        ms(r.mean),
        r.total.toFixed(1),
        isFloor ? "—" : signed(r.p50 - floor.p50),
        isFloor ? "—" : signed(r.mean - floor.mean),
        ms(r.early),
        ms(r.late),
        ms(r.cpu),
        isFloor ? "—" : signed(r.cpu - floor.cpu),
      ]),
    );
  }
}

/**
 * Where our time goes: store calls per step and time per call (last round), and the medians over the
 * rounds of the store's time per step and of the mean overhead left once that time is taken out.
 */
function printStoreCalls(rounds: readonly Round[], steps: number): void {
  const last = rounds.at(-1)!;
  for (const key of OURS) {
    const calls = Object.entries(last.ours[key].storeCalls)
      .filter(([, stat]) => stat.count >= steps / 2)
      .sort((a, b) => b[1].ms - a[1].ms)
      .map(
        ([method, stat]) =>
          `${method} ${(stat.count / steps).toFixed(2)}/step × ${ms(stat.ms / stat.count)} ms`,
      );
    const storePerStep = rounds.map(
      (r) => Object.values(r.ours[key].storeCalls).reduce((sum, stat) => sum + stat.ms, 0) / steps,
    );
    const rest = rounds.map((r, i) => r.summaries[key].mean - storePerStep[i]! - r.summaries.floor.mean);
    console.log(
      `${NAMES[key]}: store ${ms(median(storePerStep))} ms/step (${calls.join(", ")}); mean overhead without the store ${signed(median(rest))} ms`,
    );
  }
}

function ratio(ours: number, theirs: number): string {
  return theirs <= 0 ? "n/a (peer at or below the floor)" : `${(ours / theirs).toFixed(2)}×`;
}

function printVerdicts(results: Record<Key, Summary>): void {
  const floor = results.floor;
  const over = (key: Key, stat: "p50" | "mean"): number => results[key][stat] - floor[stat];
  for (const stat of ["p50", "mean"] as const) {
    const ours = over("sqlite", stat);
    console.log(
      `overhead (${stat}) ours on SQLite / pi: ${ratio(ours, over("pi", stat))}   / AI SDK: ${ratio(ours, over("aiSdk", stat))}`,
    );
  }
  console.log("");
  const check = (ok: boolean, text: string): void => console.log(`${ok ? "[x]" : "[ ]"} ${text}`);
  for (const stat of ["p50", "mean"] as const) {
    const ours = over("sqlite", stat);
    const pi = over("pi", stat);
    const halfAiSdk = over("aiSdk", stat) / 2;
    check(ours < pi, `${stat}: SQLite overhead below pi's (${ms(ours)} vs ${ms(pi)})`);
    check(
      ours < halfAiSdk,
      `${stat}: SQLite overhead under half the AI SDK's (${ms(ours)} vs ${ms(halfAiSdk)})`,
    );
    check(ours < 1, `${stat}: SQLite overhead under 1 ms over the floor (${ms(ours)})`);
    const postgres = over("postgres", stat);
    check(postgres < 2, `${stat}: PostgreSQL overhead under 2 ms over the floor (${ms(postgres)})`);
    const effects = over("postgresEffects", stat);
    check(
      effects < 2,
      `${stat}: [diag] PostgreSQL with a side-effecting tool under 2 ms over the floor (${ms(effects)})`,
    );
  }
}

async function main(): Promise<void> {
  console.log(
    `# loop bench: ${STEPS}-step session (${STEPS - 1} noop tool calls + final text), zero latency, ${ROUNDS} rounds (medians), after a ${WARMUP_STEPS}-step warm-up round`,
  );
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, load ${load}`);
  console.log(
    "per-step time (ms) = interval between consecutive step starts; overhead = minus the floor's figure;\nearly/late = p50 of the first/last quarter of the steps; cpu/step = process CPU (user+system) per step\n",
  );
  await round(WARMUP_STEPS);
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const result = await round(STEPS);
    rounds.push(result);
    const p50s = ORDER.map((key) => `${NAMES[key]} ${ms(result.summaries[key].p50)}`).join(", ");
    console.log(`round ${i + 1} p50: ${p50s}`);
  }
  const results = {} as Record<Key, Summary>;
  for (const key of ORDER) results[key] = medianSummary(rounds.map((r) => r.summaries[key]));
  const bodyKiB = (rounds.at(-1)!.lastBodyBytes / 1024).toFixed(1);
  console.log(`\n${results.floor.samples} samples per session; last request body ${bodyKiB} KiB\n`);
  printTable(results);
  console.log("");
  printStoreCalls(rounds, STEPS);
  console.log("");
  printVerdicts(results);

  const prefix = await runPrefixSession();
  console.log(
    `\n## prefix reuse (${prefix.requests}-request session; cwd, sandbox and approval change during tool calls)`,
  );
  for (const failure of prefix.failures) console.log(`  does not extend: ${failure}`);
  console.log(
    `runtime-context messages in the last request: ${prefix.runtimeContexts} (first + one per change)`,
  );
  console.log(`prefix reuse: ${prefix.extending}/${prefix.pairs} requests extend the previous one`);
  console.log(
    `load at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
}

await main();
