/**
 * The transcript projection's cost (src/transcript/projection.ts): a 10,000-event session projected at once
 * (a reopen) and one event at a time (a live view), beside the floor of any projection, one `usageOf` pass
 * over the same events.
 *
 * Aims: the whole session under 50 ms; under 5 µs per event.
 * Run: node --import tsx bench/transcript/run.ts
 */
import { performance } from "node:perf_hooks";
import type { LogEvent } from "../../src/log/events.js";
import { usageOf } from "../../src/log/usage.js";
import { projectTranscript, Transcript } from "../../src/transcript/projection.js";
import { sessionScript } from "../../test/transcript/session-script.js";

function sessionOf(size: number): LogEvent[] {
  const events: LogEvent[] = [];
  for (let seed = 1; events.length < size; seed++) {
    for (const event of sessionScript(seed, { turns: 6, maxCalls: 6, sessionId: "bench" })) {
      if (events.length === size) break;
      if (event.type === "session/start" || event.type === "session/end-seed") continue;
      events.push({ ...event, seq: events.length + 1 } as LogEvent);
    }
  }
  return events;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const events = sessionOf(10_000);
const runs = 30;
const whole: number[] = [];
const oneByOne: number[] = [];
const floor: number[] = [];
for (let i = 0; i < runs + 5; i++) {
  let start = performance.now();
  const t = projectTranscript(events);
  const a = performance.now() - start;
  start = performance.now();
  const live = new Transcript();
  for (const event of events) live.add([event]);
  const b = performance.now() - start;
  start = performance.now();
  usageOf(events);
  const c = performance.now() - start;
  if (t.items.length !== live.items.length) throw new Error("projections disagree");
  if (i >= 5) {
    whole.push(a);
    oneByOne.push(b);
    floor.push(c);
  }
}
const items = projectTranscript(events).items.length;
const w = median(whole);
const o = median(oneByOne);
const f = median(floor);
console.log(`events ${events.length}, items ${items}, runs ${runs} (medians)`);
console.log(
  `at once      ${w.toFixed(2)} ms  ${((w * 1000) / events.length).toFixed(3)} µs/event  (aim < 50 ms, < 5 µs)`,
);
console.log(`one by one   ${o.toFixed(2)} ms  ${((o * 1000) / events.length).toFixed(3)} µs/event`);
console.log(
  `usageOf pass ${f.toFixed(2)} ms  (one pass over the log: projection is ${(w / f).toFixed(1)}× it)`,
);
