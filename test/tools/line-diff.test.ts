/** The line diffs behind instruction review and the file tools' `file-change` details. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  diffAll,
  diffHunks,
  type HunkLine,
  lineDiff,
  linesOf,
  textHunks,
} from "../../src/tools/files/line-diff.js";

const lines = fc.array(fc.constantFrom("a", "b", "c", "d"), { maxLength: 12 });
const kept = (diff: { kind: string; text: string }[], drop: string) =>
  diff.filter((d) => d.kind !== drop && d.kind !== "@").map((d) => d.text);

describe("lineDiff", () => {
  it("applying the diff to the old text gives the new text (property)", () => {
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const diff = lineDiff(a.join("\n"), b.join("\n"), 1_000);
        expect(kept(diff, "+")).toEqual(a.join("\n") === "" ? [] : a);
        expect(kept(diff, "-")).toEqual(b.join("\n") === "" ? [] : b);
      }),
    );
  });
});

describe("diffAll", () => {
  it("is a whole edit script: the old lines without +, the new without - (property)", () => {
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const script = diffAll(a, b);
        expect(kept(script, "+")).toEqual(a);
        expect(kept(script, "-")).toEqual(b);
      }),
    );
  });

  it("is minimal where an LCS is easy to see: one changed line is one - and one +", () => {
    const a = Array.from({ length: 5_000 }, (_, i) => `l${i}`);
    const b = a.slice();
    b[10] = "x";
    b[4_990] = "y";
    const script = diffAll(a, b);
    expect(script.filter((line) => line.kind !== " ")).toEqual([
      { kind: "-", text: "l10" },
      { kind: "+", text: "x" },
      { kind: "-", text: "l4990" },
      { kind: "+", text: "y" },
    ]);
  });

  it("past its edit bound it still gives a correct (if not minimal) script", () => {
    const a = Array.from({ length: 3_000 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 3_000 }, (_, i) => (i % 2 === 0 ? `a${i}` : `b${i}`));
    const script = diffAll(a, b);
    expect(kept(script, "+")).toEqual(a);
    expect(kept(script, "-")).toEqual(b);
  });
});

describe("diffHunks", () => {
  it("headers count the lines each hunk covers, and hunks keep every change (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("a", "b", "c", "d", "e", "f"), { maxLength: 40 }),
        lines,
        (a, b) => {
          const script = diffAll(a, b);
          const hunks = diffHunks(script, 2);
          expect(hunks.filter((line) => line.kind === "+" || line.kind === "-")).toEqual(
            script.filter((line) => line.kind !== " "),
          );
          let at = 0;
          while (at < hunks.length) {
            const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/.exec(hunks[at]!.text);
            expect(header).not.toBeNull();
            let end = at + 1;
            while (end < hunks.length && hunks[end]!.kind !== "@") end++;
            const body = hunks.slice(at + 1, end);
            expect(Number(header![2] ?? 1)).toBe(body.filter((line) => line.kind !== "+").length);
            expect(Number(header![4] ?? 1)).toBe(body.filter((line) => line.kind !== "-").length);
            at = end;
          }
        },
      ),
    );
  });

  it("names where each hunk starts in the old and the new file", () => {
    const a = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"];
    const b = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "X", "10"];
    expect(diffHunks(diffAll(a, b), 1)).toEqual([
      { kind: "@", text: "@@ -9,2 +9,3 @@" },
      { kind: " ", text: "9" },
      { kind: "+", text: "X" },
      { kind: " ", text: "10" },
    ]);
    expect(diffHunks(diffAll([], ["only"]))[0]!.text).toBe("@@ -0,0 +1 @@");
  });
});

/** Applies unified hunks to `before`, checking every context and removed line against it. */
function applyHunks(before: string[], hunks: HunkLine[]): string[] {
  const out: string[] = [];
  let at = 0;
  for (const line of hunks) {
    if (line.kind === "@") {
      const [, start, count] = /^@@ -(\d+)(?:,(\d+))? /.exec(line.text)!;
      const index = count === "0" ? Number(start) : Number(start) - 1;
      out.push(...before.slice(at, index));
      at = index;
    } else if (line.kind === "+") {
      out.push(line.text);
    } else {
      expect(before[at]).toBe(line.text);
      if (line.kind === " ") out.push(line.text);
      at++;
    }
  }
  return [...out, ...before.slice(at)];
}

describe("textHunks", () => {
  // Long lines too, so the texts' common ends are found a block at a time.
  const texts = fc
    .tuple(
      fc.array(fc.constantFrom("a", "b", "", "x".repeat(1_500), "y".repeat(700)), { maxLength: 30 }),
      fc.boolean(),
    )
    .map(([lines, newline]) => lines.join("\n") + (newline && lines.length > 0 ? "\n" : ""));

  it("applied to the old text, its hunks give the new text; the counts are the hunks' (property)", () => {
    fc.assert(
      fc.property(texts, texts, (before, after) => {
        const { hunks, added, removed } = textHunks(before, after);
        expect(applyHunks(linesOf(before), hunks)).toEqual(linesOf(after));
        expect(added).toBe(hunks.filter((line) => line.kind === "+").length);
        expect(removed).toBe(hunks.filter((line) => line.kind === "-").length);
      }),
      { numRuns: 500 },
    );
  });

  it("one change in a long file is numbered where it is, with its context", () => {
    const before = Array.from({ length: 50_000 }, (_, i) => `line ${i}`).join("\n");
    const after = before.replace("line 30000\n", "line 30000 changed\n");
    expect(textHunks(before, after)).toEqual({
      hunks: [
        { kind: "@", text: "@@ -29998,7 +29998,7 @@" },
        { kind: " ", text: "line 29997" },
        { kind: " ", text: "line 29998" },
        { kind: " ", text: "line 29999" },
        { kind: "-", text: "line 30000" },
        { kind: "+", text: "line 30000 changed" },
        { kind: " ", text: "line 30001" },
        { kind: " ", text: "line 30002" },
        { kind: " ", text: "line 30003" },
      ],
      added: 1,
      removed: 1,
    });
  });
});
