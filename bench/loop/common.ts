/**
 * What every contender of the loop bench shares: the scripted session (the same replies for all), the
 * shape of a contender's result, and the statistics.
 *
 * A session is `steps` model replies: `steps - 1` replies each with a little reasoning and one call of the
 * trivial tool `noop` with small arguments, then a final text reply. Every contender records a timestamp
 * (`performance.now()`) at the same point of each step — the start of the step in its own terms — and the
 * per-step time is the interval between consecutive marks, so every sample covers one whole step: building
 * the request, the HTTP round trip, parsing the stream, running the tool and recording the results.
 */
import { performance } from "node:perf_hooks";
import type { FakeReply } from "../../testing/fake-provider/index.js";

export const NOOP_DESCRIPTION = "Does nothing and answers ok.";

/** JSON Schema of the `noop` tool's arguments. */
export const NOOP_PARAMETERS = {
  type: "object",
  properties: { n: { type: "number" } },
  required: ["n"],
} as const;

/** The scripted replies of one session of `steps` steps. */
export function sessionScript(steps: number): FakeReply[] {
  const replies: FakeReply[] = [];
  for (let i = 0; i < steps - 1; i++) {
    replies.push({
      reasoning: `Step ${i}: nothing to do but call noop.`,
      toolCalls: [{ id: `call_${i}`, name: "noop", arguments: { n: i } }],
    });
  }
  replies.push({ text: "All done." });
  return replies;
}

/**
 * Wall-clock and process CPU time (user + system, ms) at each step start. CPU time is the steadier figure
 * on a shared, loaded machine; it covers the whole process, the in-process fake provider included (the
 * same work for every contender, so it cancels out against the floor).
 */
export class StepMarks {
  readonly wall: number[] = [];
  readonly cpu: number[] = [];

  mark(): void {
    this.wall.push(performance.now());
    const usage = process.cpuUsage();
    this.cpu.push((usage.user + usage.system) / 1000);
  }
}

/** One session of one contender: a mark per step start. */
export type SessionRun = {
  marks: StepMarks;
  /** Requests the fake provider received (a check that the session ran every step). */
  requests: number;
};

export type Summary = {
  p50: number;
  p99: number;
  mean: number;
  total: number;
  samples: number;
  /** Process CPU ms per step (mean). */
  cpu: number;
  /** p50 of the first and of the last quarter of the steps: does a step get slower as history grows? */
  early: number;
  late: number;
};

export function intervals(marks: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < marks.length; i++) out.push(marks[i]! - marks[i - 1]!);
  return out;
}

/** Nearest-rank percentile. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export function summarize(marks: StepMarks): Summary {
  const steps = intervals(marks.wall);
  const cpuSpent = marks.cpu.at(-1)! - marks.cpu[0]!;
  const total = steps.reduce((a, b) => a + b, 0);
  return {
    p50: percentile(steps, 50),
    p99: percentile(steps, 99),
    mean: total / steps.length,
    total,
    samples: steps.length,
    cpu: cpuSpent / steps.length,
    early: percentile(steps.slice(0, Math.ceil(steps.length / 4)), 50),
    late: percentile(steps.slice(-Math.ceil(steps.length / 4)), 50),
  };
}

/** The median of each figure over several runs. */
export function medianSummary(runs: readonly Summary[]): Summary {
  const of = (key: keyof Summary): number => median(runs.map((r) => r[key]));
  return {
    p50: of("p50"),
    p99: of("p99"),
    mean: of("mean"),
    total: of("total"),
    samples: of("samples"),
    cpu: of("cpu"),
    early: of("early"),
    late: of("late"),
  };
}

export function assertSteps(name: string, run: SessionRun, steps: number): void {
  if (run.requests !== steps) throw new Error(`${name}: ${run.requests} requests, expected ${steps}`);
  const marks = run.marks.wall.length;
  if (marks < steps) throw new Error(`${name}: ${marks} step marks, expected ${steps}`);
}
