/**
 * bench/ui (issue 15): what rendering a streamed reply costs the terminal views.
 *
 * A reply of `--tokens` tokens (markdown-ish: headings, lists, code blocks; ~4 characters a token) is fed
 * at `--rate` tokens per second, one token a delta, into each scenario's sink writing to a fake terminal
 * (isTTY, 120 columns). Per scenario: CPU time of this process (process.cpuUsage, user + system) as % of
 * one core over the wall time; writes to the fake terminal per second (every write counts as a repaint)
 * and the most writes in any 1 s window; and the scenario's own repaint count when it keeps one (RunView's
 * status-line paints). The `floor` scenario writes the raw deltas and renders nothing; ratios are to it.
 *
 * Aims (issue 15): < 5 % of one core, ≤ 30 repaints a second.
 *
 *   node --import tsx bench/ui/run.ts [--tokens 10000] [--rate 200]   (env BENCH_UI_TOKENS, BENCH_UI_RATE)
 *
 * A new view (the chat TUI's) is one more entry in SCENARIOS.
 */
import { EventEmitter } from "node:events";
import { cpus } from "node:os";
import { ChatScreen } from "../../src/cli/chat/chat-screen.js";
import { withTuiEnvironment } from "../../src/cli/chat/load-tui.js";
import { palette } from "../../src/cli/render/style.js";
import { RunView, type TermStream } from "../../src/cli/run-view.js";

/** A fake terminal that records when each write happened. */
export class FakeTerm implements TermStream {
  readonly isTTY = true;
  readonly columns = 120;
  readonly at: number[] = [];
  bytes = 0;
  write(text: string): boolean {
    this.at.push(performance.now());
    this.bytes += text.length;
    return true;
  }
}

// As `bdsh chat` loads them: React's production build (src/cli/chat/load-tui.ts).
const { render, createElement, ChatApp } = await withTuiEnvironment(async () => ({
  ...(await import("ink")),
  ...(await import("react")),
  ...(await import("../../src/cli/chat/chat-app.js")),
}));

/** The same fake terminal with what Ink asks of a stdout stream (rows, resize listeners). */
class FakeInkTerm extends EventEmitter {
  readonly isTTY = true;
  readonly columns = 120;
  readonly rows = 40;
  /** When each frame began: Ink writes a frame as several writes in one tick (sync markers, erase, text). */
  readonly frames: number[] = [];
  private inFrame = false;
  constructor(private readonly term: FakeTerm) {
    super();
  }
  write(text: string): boolean {
    if (!this.inFrame) {
      this.inFrame = true;
      this.frames.push(performance.now());
      setImmediate(() => {
        this.inFrame = false;
      });
    }
    return this.term.write(text);
  }
}

/** One view under test: given the fake terminals, a sink for deltas and a `finish()`. */
export type Scenario = {
  name: string;
  start(term: { stdout: FakeTerm; stderr: FakeTerm }): {
    delta: (delta: string) => void;
    finish(): void;
    /** The view's own repaint count, when it keeps one. */
    repaints?: () => number;
    /** When each repaint happened, when the view's writes are not one a repaint. */
    repaintTimes?: () => readonly number[];
  };
};

export const SCENARIOS: Scenario[] = [
  {
    name: "floor (raw deltas, no rendering)",
    start: ({ stdout }) => ({ delta: (d) => stdout.write(d), finish: () => undefined }),
  },
  {
    name: "bdsh run (RunView: markdown + status line)",
    start: ({ stdout, stderr }) => {
      const view = new RunView({ stdout, stderr, env: { FORCE_COLOR: "1" } });
      view.events([]);
      return {
        delta: (d) => view.delta("text", d),
        finish: () => view.finish(),
        repaints: () => view.repaints,
      };
    },
  },
  {
    name: "bdsh chat (Ink TUI: transcript, live markdown, status, editor)",
    start: ({ stdout }) => {
      const screen = new ChatScreen(palette(true), 120, () => ({
        input: 0.28,
        cachedInput: 0.028,
        output: 0.42,
      }));
      const term = new FakeInkTerm(stdout);
      const ink = render(createElement(ChatApp, { screen, p: palette(true), hint: "Enter send" }), {
        stdout: term as unknown as NodeJS.WriteStream,
        stdin: new EventEmitter() as unknown as NodeJS.ReadStream,
        exitOnCtrlC: false,
        patchConsole: false,
        maxFps: 30,
      });
      screen.userMessage("write the parser plan", false);
      screen.turnStarted();
      return {
        delta: (d) => screen.delta("text", d),
        finish: () => ink.unmount(),
        repaints: () => term.frames.length,
        repaintTimes: () => term.frames,
      };
    },
  },
];

/** A markdown-ish reply of about `tokens` tokens, split into one-token (~4 character) deltas. */
export function replyDeltas(tokens: number): string[] {
  const sections: string[] = [];
  for (let i = 0; sections.join("").length < tokens * 4; i++) {
    sections.push(
      `## Step ${i + 1}: update the \`parser\` module\n\n` +
        `The **tokenizer** reads each line and keeps *state* between calls, so a long input is read once.\n\n` +
        `- keep the public \`parse()\` signature\n- add a test for empty input\n- measure before and after\n\n` +
        "```ts\n" +
        `export function parse${i}(input: string): Node[] {\n  const out: Node[] = [];\n  for (const line of input.split("\\n")) out.push(node(line));\n  return out;\n}\n` +
        "```\n\n" +
        `1. run \`npm test\`\n2. check the diff\n\n> Note: nothing else changes in step ${i + 1}.\n\n`,
    );
  }
  const text = sections.join("").slice(0, tokens * 4);
  const deltas: string[] = [];
  for (let i = 0; i < text.length; i += 4) deltas.push(text.slice(i, i + 4));
  return deltas;
}

/** The most timestamps (ms) inside any 1 s window. */
export function maxPerSecond(at: readonly number[]): number {
  const sorted = [...at].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while (sorted[hi]! - sorted[lo]! >= 1000) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

export type Result = {
  name: string;
  wallMs: number;
  cpuMs: number;
  cpuPercent: number;
  writes: number;
  writesPerSecond: number;
  maxWritesIn1s: number;
  repaints?: number;
  repaintsPerSecond?: number;
  maxRepaintsIn1s?: number;
  /** What the ≤ 30 aim is checked on: frames when the view reports them (Ink), else every write. */
  maxPaintsIn1s: number;
};

/** Streams the deltas at `rate` tokens a second through one scenario (a 5 ms tick sends what is due). */
export async function runScenario(
  scenario: Scenario,
  deltas: readonly string[],
  rate: number,
): Promise<Result> {
  const stdout = new FakeTerm();
  const stderr = new FakeTerm();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const sink = scenario.start({ stdout, stderr });
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(deltas.length, Math.floor(((performance.now() - t0) / 1000) * rate));
      while (sent < due) sink.delta(deltas[sent++]!);
      if (sent >= deltas.length) {
        clearInterval(tick);
        resolve();
      }
    }, 5);
  });
  sink.finish();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const writes = [...stdout.at, ...stderr.at];
  const result: Result = {
    name: scenario.name,
    wallMs,
    cpuMs,
    cpuPercent: (cpuMs / wallMs) * 100,
    writes: writes.length,
    writesPerSecond: writes.length / (wallMs / 1000),
    maxWritesIn1s: maxPerSecond(writes),
    maxPaintsIn1s: sink.repaintTimes ? maxPerSecond(sink.repaintTimes()) : maxPerSecond(writes),
  };
  if (sink.repaints) {
    const repaints = sink.repaints?.() ?? 0;
    result.repaints = repaints;
    result.repaintsPerSecond = repaints / (wallMs / 1000);
    // RunView: status-line paints are stderr writes, one a paint. Ink: frames, each several writes.
    result.maxRepaintsIn1s = maxPerSecond(sink.repaintTimes?.() ?? stderr.at);
  }
  return result;
}

function flag(name: string, envName: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const raw = i >= 0 ? process.argv[i + 1] : process.env[envName];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

async function main(): Promise<void> {
  const tokens = flag("tokens", "BENCH_UI_TOKENS", 10_000);
  const rate = flag("rate", "BENCH_UI_RATE", 200);
  const deltas = replyDeltas(tokens);
  console.log(
    `bench/ui: ${deltas.length} deltas (~${tokens} tokens, ${deltas.join("").length} chars) at ${rate} tokens/s; ` +
      `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "?"}`,
  );
  const results: Result[] = [];
  // BENCH_UI_ONLY=<text>: the floor and the scenarios whose name contains the text (e.g. `chat`).
  const only = process.env.BENCH_UI_ONLY;
  const chosen = SCENARIOS.filter((s, i) => i === 0 || !only || s.name.includes(only));
  for (const scenario of chosen) {
    const r = await runScenario(scenario, deltas, rate);
    results.push(r);
    const floor = results[0]!;
    const ratio = r === floor ? "" : ` (${(r.cpuMs / Math.max(floor.cpuMs, 0.001)).toFixed(1)}× floor CPU)`;
    console.log(
      `${r.name}\n  wall ${(r.wallMs / 1000).toFixed(1)} s · CPU ${r.cpuMs.toFixed(0)} ms = ${r.cpuPercent.toFixed(2)} % of one core${ratio}\n` +
        `  terminal writes ${r.writes} = ${r.writesPerSecond.toFixed(1)}/s, max ${r.maxWritesIn1s} in any 1 s` +
        (r.repaints === undefined
          ? ""
          : `\n  repaints ${r.repaints} = ${r.repaintsPerSecond!.toFixed(1)}/s, max ${r.maxRepaintsIn1s} in any 1 s`),
    );
  }
  for (const view of results.slice(1)) {
    const ok = view.cpuPercent < 5 && view.maxPaintsIn1s <= 30;
    console.log(
      `aims for ${view.name} (< 5 % of one core, ≤ 30 repaints/s in any 1 s): ${ok ? "met" : "NOT met"}`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
