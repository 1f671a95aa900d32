/**
 * Context benchmark (issue 6 item 13):
 * - token meter cost per step at 1k, 10k and 100k events: append one step's events, measure; the cost
 *   should be flat (C2 is incremental), at most 2× from 1k to 100k;
 * - compaction range selection (C5) at 100k events with the default retain budget;
 * - prefix reuse across the scripted 300-step session with a small window (test/context/long-session.ts):
 *   the share of the previous request's messages repeated unchanged, on steps without a compaction
 *   (should be 1.0) and on steps after one.
 *
 *   node --import tsx bench/context/run.ts
 */
import { performance } from "node:perf_hooks";
import { compactionBudget } from "../../src/context/compaction/budget.js";
import { rangeFor } from "../../src/context/compaction/engine.js";
import type { CompactionLog } from "../../src/context/compaction/pruner.js";
import type { LogEvent, NewEvent } from "../../src/log/events.js";
import { SurfaceProjector } from "../../src/log/surface.js";
import { TokenMeter } from "../../src/log/token-meter.js";
import { isSummaryRequest, longSession, prefixReuse } from "../../test/context/long-session.js";

function syntheticLog(): CompactionLog & { step(i: number): void } {
  const events: LogEvent[] = [];
  const surface = new SurfaceProjector();
  const add = (...batch: NewEvent[]) =>
    batch.map((e) => {
      const event = {
        ...e,
        sessionId: "bench",
        seq: events.length + 1,
        at: "2025-01-01T00:00:00Z",
      } as LogEvent;
      events.push(event);
      surface.apply(event);
      return event;
    });
  add({ type: "system/message", data: { text: "You are a bench agent.".repeat(20) } });
  return {
    sessionId: "bench",
    events,
    surface,
    get seq() {
      return events.length;
    },
    add,
    flush: async () => undefined,
    /** One tool step: start, assistant with a call and usage, call, result, end (5 events). */
    step(i: number) {
      add(
        { type: "step/start", data: {} },
        {
          type: "assistant/message",
          data: {
            blocks: [
              { type: "reasoning", text: "think about the next module" },
              { type: "tool-call", id: `c${i}`, name: "read", arguments: `{"path":"src/m${i}.ts"}` },
            ],
            provider: "bench",
            model: "bench",
            finish: "tool-calls",
            usage: { inputTokens: 10 * i + 1000, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 },
          },
        },
        { type: "tool/call", data: { callId: `c${i}`, name: "read", arguments: `{"path":"src/m${i}.ts"}` } },
        {
          type: "tool/result",
          data: { callId: `c${i}`, name: "read", text: "export const x = 1;\n".repeat(20) },
        },
        { type: "step/end", data: { result: "continue" } },
      );
    },
  };
}

function meterCost(events: number): { perStepUs: number } {
  const log = syntheticLog();
  let i = 0;
  while (log.events.length < events) log.step(i++);
  const meter = new TokenMeter();
  const tools = [{ name: "read", description: "read a file", parameters: { type: "object" } }];
  meter.measure(log, tools); // the first measurement reads everything once
  const steps = 2000;
  let spent = 0;
  for (let k = 0; k < steps; k++) {
    log.step(i++);
    const started = performance.now();
    meter.measure(log, tools);
    spent += performance.now() - started;
  }
  return { perStepUs: (spent / steps) * 1000 };
}

function rangeSelection(events: number): { ms: number; rangeNodes: number; tailNodes: number } {
  const log = syntheticLog();
  let i = 0;
  while (log.events.length < events) log.step(i++);
  const { retain } = compactionBudget(1_048_576, 256_000);
  const meter = new TokenMeter();
  meter.measure(log);
  const runs = 50;
  let range: ReturnType<typeof rangeFor>;
  const started = performance.now();
  for (let k = 0; k < runs; k++) range = rangeFor(log, meter, retain);
  const ms = (performance.now() - started) / runs;
  const nodes = log.surface.surface.length;
  return { ms, rangeNodes: range!.end - range!.start + 1, tailNodes: nodes - range!.end - 1 };
}

async function prefixSession() {
  const { fixture, workRequests } = await longSession({ steps: 300 });
  const started = performance.now();
  await fixture.agent.followup("migrate every module");
  await fixture.agent.whenIdle();
  const seconds = (performance.now() - started) / 1000;
  const ratios = prefixReuse(workRequests());
  const afterCompaction: number[] = [];
  const plain: number[] = [];
  let sawSummary = false;
  let work = 0;
  for (const request of fixture.fake.requests) {
    if (isSummaryRequest(request)) {
      sawSummary = true;
      continue;
    }
    if (work > 0) (sawSummary ? afterCompaction : plain).push(ratios[work - 1]!);
    sawSummary = false;
    work++;
  }
  const compactions = (await fixture.events()).filter((e) => e.type === "compaction/end" && e.data.ok).length;
  await fixture.close();
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return { seconds, compactions, plain, afterCompaction, mean };
}

const rows: string[] = [];
meterCost(10_000); // warm-up: JIT
for (const n of [1_000, 10_000, 100_000]) {
  const { perStepUs } = meterCost(n);
  rows.push(`meter per step at ${String(n).padStart(7)} events: ${perStepUs.toFixed(2)} µs`);
}
const range = rangeSelection(100_000);
rows.push(
  `range selection at 100k events (retain 126,812): ${range.ms.toFixed(3)} ms (${range.rangeNodes} nodes replaced, ${range.tailNodes} kept)`,
);
const session = await prefixSession();
rows.push(
  `300-step session (SQLite, window 40,000): ${session.compactions} compactions in ${session.seconds.toFixed(1)} s`,
  `prefix reuse on ${session.plain.length} steps without a compaction: mean ${session.mean(session.plain).toFixed(3)}, min ${Math.min(...session.plain).toFixed(3)}`,
  `prefix reuse on ${session.afterCompaction.length} steps right after a compaction: mean ${session.mean(session.afterCompaction).toFixed(3)}`,
);
for (const row of rows) console.log(row);
