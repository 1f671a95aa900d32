/**
 * Issue 32: what `write` and `edit` pay for their `file-change` details. `fileChangeDetails(path, before,
 * after)` diffs the file's content before and after the call (the texts' common ends trimmed by characters,
 * then Myers on the lines between, bounded to 1,000 edits, then hunks, then 400 stored lines). This times
 * it for the shapes that matter, next to `writeFileSync` of the same content (what the tool does anyway) as
 * the yardstick, and prints how large the stored details are.
 *
 *   node --import tsx bench/tools/file-change.ts [iterations=20]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileChangeDetails } from "../../src/tools/files/file-change.js";

const ITERATIONS = Number(process.argv[2] ?? 20);
const lines = (
  n: number,
  f: (i: number) => string = (i) => `const value${i} = compute(${i}); // line ${i}`,
) => Array.from({ length: n }, (_, i) => f(i));

const file2k = lines(2_000);
const file100k = lines(100_000);
const cases: [string, string | undefined, string][] = [
  [
    "edit: 1 line of 2,000",
    file2k.join("\n"),
    file2k.map((l, i) => (i === 1_000 ? "changed" : l)).join("\n"),
  ],
  [
    "edit: 1 line of 100,000",
    file100k.join("\n"),
    file100k.map((l, i) => (i === 60_000 ? "changed" : l)).join("\n"),
  ],
  [
    "edit replace_all: 2 places of 100,000",
    file100k.join("\n"),
    file100k.map((l, i) => (i === 10 || i === 99_990 ? "changed" : l)).join("\n"),
  ],
  [
    "write: 5,000 of 10,000 lines changed (over the edit bound)",
    lines(10_000).join("\n"),
    lines(10_000, (i) => (i % 2 ? `other ${i}` : `const value${i} = compute(${i}); // line ${i}`)).join("\n"),
  ],
  ["write: a new 100,000-line file", undefined, file100k.join("\n")],
];

function msPerCall(run: () => unknown): number {
  run();
  const start = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) run();
  return Number(process.hrtime.bigint() - start) / 1e6 / ITERATIONS;
}

const dir = mkdtempSync(join(tmpdir(), "bdsh-bench-file-change-"));
console.log(
  `fileChangeDetails, ms per call (${ITERATIONS} iterations), beside writeFileSync of the new content`,
);
for (const [name, before, after] of cases) {
  const details = fileChangeDetails("/w/f.ts", before, after);
  const diff = msPerCall(() => fileChangeDetails("/w/f.ts", before, after));
  const write = msPerCall(() => writeFileSync(join(dir, "f.ts"), after));
  const bytes = JSON.stringify(details).length;
  console.log(
    `${name.padEnd(58)} diff ${diff.toFixed(2)} ms | write ${write.toFixed(2)} ms | details ${bytes} bytes, +${details.added} -${details.removed}, ${details.diff.length} lines stored`,
  );
}
rmSync(dir, { recursive: true, force: true });
