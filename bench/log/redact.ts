/**
 * Issue 14 finding 4: what the redactor costs on the append path. `SessionLog.add` runs
 * `redactor.value(event.data)` on every event; this times it per event for typical events (a small tool
 * result, an assistant message with reasoning and a call, a 64 KB tool result) with no secret known, the
 * provider key alone, and 20 / 100 known values, next to `JSON.stringify` of the same data (what every
 * store append does anyway) as the yardstick.
 *
 *   node --import tsx bench/log/redact.ts [iterations=20000]
 */
import { Redactor } from "../../src/log/redact.js";

const ITERATIONS = Number(process.argv[2] ?? 20_000);

const line = "src/parse.ts:12:  return a + b; // a line of ordinary tool output\n";
const events: Record<string, unknown> = {
  "tool/result 2 KB": { callId: "c1", name: "bash", text: line.repeat(30), metadata: { exitCode: 0 } },
  "assistant/message": {
    blocks: [
      { type: "reasoning", text: "I should look at the parser first, then run the tests.".repeat(8) },
      { type: "text", text: "Let me read the file." },
      { type: "tool-call", id: "c2", name: "read", arguments: '{"file_path":"/work/repo/src/parse.ts"}' },
    ],
    usage: { input: 12_000, output: 300 },
  },
  "tool/result 64 KB": { callId: "c3", name: "bash", text: line.repeat(1000), metadata: { exitCode: 0 } },
};

const values = (n: number) => Array.from({ length: n }, (_, i) => `sk-${i}-${"q".repeat(24)}${i}`);
const redactors: Record<string, Redactor> = {
  none: Redactor.none,
  "1 value (the key)": Redactor.of(values(1)),
  "20 values": Redactor.of(values(20)),
  "100 values": Redactor.of(values(100)),
};

function perEventMicros(run: () => unknown): number {
  for (let i = 0; i < 1000; i++) run();
  const start = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) run();
  return Number(process.hrtime.bigint() - start) / 1000 / ITERATIONS;
}

console.log(`redactor.value(event.data), µs per event (${ITERATIONS} iterations)`);
for (const [eventName, data] of Object.entries(events)) {
  const json = perEventMicros(() => JSON.stringify(data));
  const cells = Object.entries(redactors).map(
    ([name, redactor]) => `${name}: ${perEventMicros(() => redactor.value(data)).toFixed(2)}`,
  );
  console.log(`${eventName.padEnd(18)} JSON.stringify: ${json.toFixed(2)} | ${cells.join(" | ")}`);
}
