/**
 * Dangerous-command detector benchmark (issue 14 finding 6):
 * - a 5 MB command through the guard (refused by `tools.bash.max_command_bytes` before any analysis);
 * - every pathological shape at the limit (test/tools/dangerous-corpus.ts `pathological`), with the
 *   default time budget (what the event loop pays) and unbounded (what the parse alone would cost);
 * - p50/p99 per ordinary command over the safe corpus;
 * - the same inputs through the old regex detector (bench/tools/old-regex-detector.ts, the baseline
 *   peer), measured in the same run. The old one is quadratic, so it is run only where it finishes.
 *
 *   node --import tsx bench/tools/detector.ts
 */
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { CommandGuard, DEFAULT_MAX_COMMAND_BYTES } from "../../src/tools/guards/command-guard.js";
import { analyzeCommand, warmParser } from "../../src/tools/guards/dangerous-commands.js";
import { loadShellParser } from "../../src/tools/guards/shell-parse.js";
import type { PreExecuteState, ToolExec } from "../../src/tools/types.js";
import { pathological, SAFE_COMMANDS } from "../../test/tools/dangerous-corpus.js";
import { detectDangerousCommand as oldDetect } from "./old-regex-detector.js";

const LIMIT = DEFAULT_MAX_COMMAND_BYTES;
let parser = await loadShellParser();
const guard = new CommandGuard({ allowlist: [] });
guard.install(new HookBus());

const ms = (value: number) => `${value.toFixed(value < 0.1 ? 4 : value < 10 ? 3 : 1)} ms`;
const ratio = (oldValue: number, newValue: number) => `${(oldValue / newValue).toFixed(1)}×`;
const rows: [string, string, string, string][] = [];

function state(command: string): PreExecuteState {
  return {
    call: { callId: "c", name: "bash", rawArguments: "", args: { command } },
    tool: undefined,
    exec: {} as ToolExec,
    decision: { kind: "allow" },
  };
}

function best(n: number, body: () => unknown): number {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < n; i += 1) {
    const start = performance.now();
    body();
    min = Math.min(min, performance.now() - start);
  }
  return min;
}

async function bestAsync(n: number, body: () => Promise<unknown>): Promise<number> {
  let max = 0;
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < n; i += 1) {
    const start = performance.now();
    await body();
    const took = performance.now() - start;
    min = Math.min(min, took);
    max = Math.max(max, took);
  }
  return min;
}

// Warm up the parser and both detectors.
for (let i = 0; i < 200; i += 1)
  for (const c of SAFE_COMMANDS.slice(0, 50)) {
    analyzeCommand(parser, c);
    oldDetect(c);
  }

// 1. A 5 MB command through the guard.
const huge = `rm -rf d; ${"x ".repeat(2.5 * 1024 * 1024)}`;
const hugeGuard = await bestAsync(20, () => guard.decide(state(huge)));
const hugeDecision = (await guard.decide(state(huge))).decision.kind;
rows.push([
  "5 MB command, guard (refused by size)",
  ms(hugeGuard),
  "not run (quadratic: hours)",
  hugeDecision,
]);

// 2. Pathological inputs at the limit.
let worst = { name: "", time: 0 };
for (const [name, command] of Object.entries(pathological(LIMIT))) {
  parser = await loadShellParser(); // a fresh instance if the previous shape faulted the last one
  await warmParser(parser); // as detectDangerousCommands does before a parser's first command
  let max = 0;
  let keys: string[] = [];
  for (let i = 0; i < 5; i += 1) {
    const start = performance.now();
    keys = analyzeCommand(parser, command).map((m) => m.key);
    max = Math.max(max, performance.now() - start);
  }
  // Without the budget, up to 1 s: past that some shapes grow the WebAssembly memory until the runtime
  // aborts (the parser then fails closed and is rebuilt).
  const start = performance.now();
  const free = analyzeCommand(parser, command, { timeBudgetMs: 1_000 }).map((m) => m.key);
  const took = performance.now() - start;
  const alone = free.includes("analysis-timeout")
    ? "> 1,000 ms"
    : free.includes("analysis-failed")
      ? `runtime fault after ${ms(took)}`
      : ms(took);
  if (max > worst.time) worst = { name, time: max };
  rows.push([
    `64 KiB ${name} (worst of 5; without the budget ${alone})`,
    ms(max),
    "",
    keys.join(",") || "safe",
  ]);
}
rows.push([`worst pathological at the limit: ${worst.name}`, ms(worst.time), "", ""]);
parser = await loadShellParser();
await warmParser(parser);

// The old detector's quadratic shape, where it still finishes.
for (const size of [16_384, 32_768, 65_536]) {
  const words = "a ".repeat(size / 2);
  const oldTime = best(1, () => oldDetect(words));
  const newTime = best(5, () => analyzeCommand(parser, words));
  rows.push([
    `${size / 1024} KiB 'a a a …' (old detector's worst shape)`,
    ms(newTime),
    ms(oldTime),
    ratio(oldTime, newTime),
  ]);
}

// 3. Ordinary commands.
function percentiles(run: (c: string) => unknown): { p50: number; p99: number } {
  const times: number[] = [];
  for (let round = 0; round < 200; round += 1)
    for (const command of SAFE_COMMANDS) {
      const start = performance.now();
      run(command);
      times.push(performance.now() - start);
    }
  times.sort((a, b) => a - b);
  return {
    p50: times[Math.floor(times.length * 0.5)] as number,
    p99: times[Math.floor(times.length * 0.99)] as number,
  };
}
const fresh = percentiles((c) => analyzeCommand(parser, c));
const old = percentiles((c) => oldDetect(c));
rows.push([
  `safe corpus (${SAFE_COMMANDS.length} commands × 200), p50`,
  ms(fresh.p50),
  ms(old.p50),
  ratio(old.p50, fresh.p50),
]);
rows.push([
  `safe corpus (${SAFE_COMMANDS.length} commands × 200), p99`,
  ms(fresh.p99),
  ms(old.p99),
  ratio(old.p99, fresh.p99),
]);

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}, node ${process.version}`,
);
console.log("| measure | new (tree-sitter) | old (regex) | old/new or verdict |\n|---|---|---|---|");
for (const [name, a, b, c] of rows) console.log(`| ${name} | ${a} | ${b} | ${c} |`);
process.exit(0);
