/**
 * docs/seed-ids.md resolves every seed id and "issue N" that src/ cites (issue 16 item 11), and the
 * extraction behind that claim reads comments the way the TypeScript parser does.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  check,
  documentedIds,
  idsIn,
  isSeedId,
  refreshedDoc,
  repoRoot,
  SERIES,
  splitSource,
} from "../../docs/tools/check-seed-ids.mjs";

const docPath = join(repoRoot, "docs", "seed-ids.md");

describe("docs/seed-ids.md", () => {
  const result = check();

  it("finds citations in src/", () => {
    expect(result.cited.length).toBeGreaterThan(50);
    expect(result.cited).toContain("L9");
  });

  it("every id cited in src/ is an entry of the design inventory", () => {
    expect(result.unknown).toEqual([]);
  });

  it("explains every id cited in src/", () => {
    expect(result.undocumented).toEqual([]);
  });

  it("explains every issue cited in src/", () => {
    expect(result.undocumentedIssues).toEqual([]);
  });

  it("lists every inventory entry once, each with a meaning, and nothing else", () => {
    const all = [
      ...Object.entries(SERIES).flatMap(([prefix, last]) =>
        Array.from({ length: last }, (_, i) => `${prefix}${i + 1}`),
      ),
      "§9",
    ];
    expect(all).toHaveLength(118); // 117 numbered entries and §9
    expect([...documentedIds(docPath)].sort()).toEqual([...all].sort());
    const rows = readFileSync(docPath, "utf8")
      .split("\n")
      .filter((line) => /^\|\s*(§9|(?:SP|[LRMCTGPS])\d+)\s*\|/.test(line));
    expect(rows).toHaveLength(all.length);
    for (const row of rows) expect(row.split("|")[2]?.trim().length ?? 0).toBeGreaterThan(20);
  });

  it("--write keeps every row and every meaning", () => {
    const text = readFileSync(docPath, "utf8");
    const refreshed = refreshedDoc(text, result);
    const meanings = (t: string) =>
      t
        .split("\n")
        .filter((line) => line.startsWith("| "))
        .map((line) => line.split("|").slice(0, 3).join("|"));
    expect(meanings(refreshed)).toEqual(meanings(text));
  });
});

describe("the extraction", () => {
  it("knows the inventory's series and their lengths", () => {
    expect(isSeedId("L19")).toBe(true);
    expect(isSeedId("L20")).toBe(false);
    expect(isSeedId("SP9")).toBe(true);
    expect(isSeedId("SP10")).toBe(false);
    expect(isSeedId("T0")).toBe(false);
    expect(isSeedId("M07")).toBe(false);
    expect(isSeedId("§9")).toBe(true);
  });

  it("expands ranges and reads issue numbers", () => {
    expect(idsIn("goal rounds (P3–P5), M6-M9").ids).toEqual(["P3", "P4", "P5", "M6", "M7", "M8", "M9"]);
    expect(idsIn("issue 14 finding 4; issues 7 and 8").issues).toEqual([14, 7, 8]);
    expect(idsIn("see §9 (d)").ids).toEqual(["§9"]);
  });

  it("ignores words that only look like ids", () => {
    expect(idsIn("C0 controls other than tab, and C1 controls").ids).toEqual([]);
    expect(idsIn("SHA256 x86 UTF8 L9x T16b v1.2 P3_x").ids).toEqual([]);
  });

  it("separates comments from strings as the parser does", () => {
    const source = [
      'const url = "http://x//L7";',
      "const re = /\\/\\/ M3/;",
      "// L9: a comment",
      "/** T2 in a doc comment */",
      `const s = \`S8 $\{1} P2\`;`,
      "function f() {",
      "  // R1 alone in a block",
      "}",
    ].join("\n");
    const { comments, literals } = splitSource("x.ts", source);
    expect(comments.flatMap((c) => idsIn(c).ids).sort()).toEqual(["L9", "R1", "T2"]);
    expect(literals.flatMap((l) => idsIn(l).ids).sort()).toEqual(["L7", "P2", "S8"]);
  });
});
