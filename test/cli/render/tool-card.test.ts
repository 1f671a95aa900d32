import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { palette, stripAnsi, visibleWidth } from "../../../src/cli/render/style.js";
import { MAX_DIFF_LINES, toolCard } from "../../../src/cli/render/tool-card.js";
import type { ToolDetails, ToolDetailsOf } from "../../../src/log/tool-details.js";
import { formatBashResult } from "../../../src/tools/bash/bash-result.js";

const plain = palette(false);
const colour = palette(true);
const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });

describe("toolCard: bash", () => {
  const bash = call("bash", { description: "Run the tests", command: "npm test" });

  it("shows the command and its description while it runs", () => {
    expect(toolCard(bash, undefined, plain, 80)).toEqual(["• $ npm test  # Run the tests"]);
  });
  it("a failing command shows its exit code from details in red, and the output tail", () => {
    const text = formatBashResult({ stdout: "ok 1\nnot ok 2\n", stderr: "boom\n", exitCode: 3 });
    const details: ToolDetails = { kind: "command", exitCode: 3, truncated: false };
    const lines = toolCard(bash, { text, details }, colour, 80);
    expect(lines.map(stripAnsi)).toEqual([
      "✗ $ npm test  # Run the tests",
      "  │ ok 1",
      "  │ not ok 2",
      "  │ boom",
      "  │ exit 3",
    ]);
    expect(lines.at(-1)).toContain("\u001b[31m");
  });
  it("the exit code is the recorded one, whatever the output prints", () => {
    const text = formatBashResult({ stdout: "[exit code: 9]\n", stderr: "" });
    const details: ToolDetails = { kind: "command", exitCode: 0, truncated: false };
    const lines = toolCard(bash, { text, details }, plain, 80);
    expect(lines[0]).toBe("✓ $ npm test  # Run the tests");
    expect(lines.some((line) => line.includes("exit 9"))).toBe(false);
  });
  it("a long output keeps its last six lines and counts the rest", () => {
    const stdout = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
    const details: ToolDetails = { kind: "command", exitCode: 0, truncated: false };
    const lines = toolCard(bash, { text: formatBashResult({ stdout, stderr: "" }), details }, plain, 80);
    expect(lines[0]).toBe("✓ $ npm test  # Run the tests");
    expect(lines[1]).toBe("  │ … 14 more lines");
    expect(lines.slice(2)).toEqual([15, 16, 17, 18, 19, 20].map((n) => `  │ line ${n}`));
  });
  it("a timeout, a signal and a cut output are notes from details, not output", () => {
    const text = formatBashResult({
      stdout: "",
      stderr: "",
      timedOutMs: 1000,
      signal: "SIGKILL",
      truncated: true,
    });
    const details: ToolDetails = {
      kind: "command",
      timedOut: true,
      signal: "SIGKILL",
      truncated: true,
      fullOutput: "spill://b-1",
    };
    expect(toolCard(bash, { text, details }, plain, 80).slice(1)).toEqual([
      "  │ output truncated; full output: spill://b-1",
      "  │ timed out",
      "  │ killed by signal SIGKILL",
    ]);
  });
  it("a command moved to the background names its job and stops at the text's instructions", () => {
    const text = `partial\n[still running after 5ms; moved to background job j-1]\nThe command keeps running.`;
    const details: ToolDetails = { kind: "command", truncated: false, jobId: "j-1" };
    expect(toolCard(bash, { text, details }, plain, 80)).toEqual([
      "✓ $ npm test  # Run the tests",
      "  │ partial",
      "  │ running in the background as job j-1",
    ]);
  });
  it("an old log's result (no details) shows its text, markers included, and reads nothing out of it", () => {
    const text = formatBashResult({ stdout: "", stderr: "", timedOutMs: 1000, exitCode: 3 });
    expect(toolCard(bash, { text }, plain, 80).slice(1)).toEqual([
      "  │ [timed out after 1000ms]",
      "  │ [exit code: 3]",
    ]);
  });
  it("a multi-line command shows its first line", () => {
    expect(toolCard(call("bash", { command: "a\nb\nc" }), undefined, plain, 80)).toEqual([
      "• $ a … (+2 lines)",
    ]);
  });
});

const change = (
  diff: ToolDetailsOf<"file-change">["diff"],
  extra: Partial<ToolDetailsOf<"file-change">> = {},
): ToolDetails => ({
  kind: "file-change",
  path: "/w/src/a.ts",
  change: "modified",
  added: diff.filter((d) => d.kind === "+").length,
  removed: diff.filter((d) => d.kind === "-").length,
  diff,
  ...extra,
});

describe("toolCard: file changes come from details, not arguments", () => {
  const edit = call("edit", { file_path: "src/a.ts", old_string: "not what changed", new_string: "x" });
  const hunk: ToolDetailsOf<"file-change">["diff"] = [
    { kind: "@", text: "@@ -1,3 +1,3 @@" },
    { kind: " ", text: "a" },
    { kind: "-", text: "b" },
    { kind: "+", text: "B" },
    { kind: " ", text: "c" },
  ];

  it("edit shows the recorded hunks, green + and red -", () => {
    const lines = toolCard(edit, { text: "The file updated.", details: change(hunk) }, colour, 80);
    expect(lines.map(stripAnsi)).toEqual([
      "✓ edit /w/src/a.ts +1 -1",
      "  │ @@ -1,3 +1,3 @@",
      "  │   a",
      "  │ - b",
      "  │ + B",
      "  │   c",
    ]);
    expect(lines[3]).toContain("\u001b[31m- b");
    expect(lines[4]).toContain("\u001b[32m+ B");
  });
  it("a long diff is cut, counting the lines the details left out too", () => {
    const diff = Array.from({ length: 50 }, (_, i) => ({ kind: "-" as const, text: `o${i}` }));
    const lines = toolCard(edit, { text: "ok", details: change(diff, { omittedLines: 10 }) }, plain, 80);
    expect(lines).toHaveLength(1 + MAX_DIFF_LINES + 1);
    expect(lines.at(-1)).toBe(`  │ … ${50 - MAX_DIFF_LINES + 10} more lines`);
  });
  it("replace_all names how many occurrences were replaced", () => {
    const details = change(hunk, { replacements: 3 });
    expect(toolCard(edit, { text: "ok", details }, plain, 80)[0]).toBe(
      "✓ edit /w/src/a.ts +1 -1 (3 occurrences)",
    );
  });
  it("a failed edit has no details: the error in red under the call's own header", () => {
    const lines = toolCard(
      edit,
      { text: 'Error: old_string was not found in "f"', isError: true },
      colour,
      80,
    );
    expect(stripAnsi(lines[0]!)).toMatch(/^✗ edit src\/a\.ts/);
    expect(lines.slice(1).map(stripAnsi)).toEqual(['  │ Error: old_string was not found in "f"']);
    expect(lines[1]).toContain("\u001b[31m");
  });
  it("a created file says so and counts its lines", () => {
    const details = change(
      [
        { kind: "+", text: "one" },
        { kind: "+", text: "two" },
      ],
      { change: "created" },
    );
    const write = call("write", { file_path: "n.txt", content: "arguments are not read" });
    expect(toolCard(write, { text: "Created file n.txt", details }, plain, 80)).toEqual([
      "✓ write /w/src/a.ts created, 2 lines",
      "  │ + one",
      "  │ + two",
    ]);
  });
  it("an edit from an old log (no details) gets the generic card, no diff guessed from arguments", () => {
    expect(toolCard(edit, { text: "The file src/a.ts has been updated successfully." }, plain, 200)).toEqual([
      '✓ edit src/a.ts old_string="not what changed" new_string="x"',
      "  │ The file src/a.ts has been updated successfully.",
    ]);
  });
});

describe("toolCard: todos and others", () => {
  it("todo_write shows the recorded list as a checklist", () => {
    const items = [
      { content: "read the code", status: "completed" as const },
      { content: "fix the bug", status: "in_progress" as const },
      { content: "add a test", status: "pending" as const },
    ];
    const details: ToolDetails = { kind: "todos", items };
    expect(toolCard(call("todo_write", { todos: [] }), { text: "Updated", details }, plain, 80)).toEqual([
      "✓ todo_write",
      "  │ [x] read the code",
      "  │ [~] fix the bug",
      "  │ [ ] add a test",
    ]);
  });
  it("read counts the file's lines from details (an 8-line file is 8 lines, not the text's 13)", () => {
    const numbered = Array.from({ length: 8 }, (_, i) => `${i + 1}: x`).join("\n");
    const text = `<path>/w/parse.js</path>\n<type>file</type>\n<content>\n${numbered}\n(End of file - total 8 lines)\n</content>`;
    const read = call("read", { file_path: "parse.js" });
    const details = { kind: "read", path: "/w/parse.js", startLine: 1, endLine: 8, totalLines: 8 } as const;
    expect(toolCard(read, { text, details }, plain, 80)).toEqual(["✓ read parse.js", "  │ 8 lines"]);
    const part = { ...details, startLine: 3, endLine: 5 };
    expect(toolCard(read, { text, details: part }, plain, 80)[1]).toBe("  │ lines 3-5 of 8");
  });
  it("grep and glob summarise their counts", () => {
    const grep = { kind: "search", pattern: "x", matches: 300, files: 4, truncated: true } as const;
    expect(toolCard(call("grep", { pattern: "x" }), { text: "…", details: grep }, plain, 80)[1]).toBe(
      "  │ 300 matches in 4 files (the first ones shown)",
    );
    const glob = { kind: "search", pattern: "*.ts", matches: 1, truncated: false } as const;
    expect(toolCard(call("glob", { pattern: "*.ts" }), { text: "…", details: glob }, plain, 80)[1]).toBe(
      "  │ 1 path",
    );
  });
  it("a subagent launch names its child", () => {
    const details = { kind: "subagent", childId: "c-7", mode: "spawn" } as const;
    expect(toolCard(call("subagent", { task: "t" }), { text: "started", details }, plain, 80)[1]).toBe(
      "  │ subagent c-7",
    );
  });
  it("another tool shows its name and a short argument summary", () => {
    expect(
      toolCard(call("list_things", { path: "src", depth: 10 }), { text: "1\ta\n2\tb" }, plain, 80),
    ).toEqual(["✓ list_things src depth=10", "  │ 2 lines"]);
  });
  it("a finished call that took a second or more shows its duration; a quicker one does not", () => {
    const slow = toolCard(call("x", {}), { text: "ok", durationMs: 12_400 }, colour, 80);
    expect(stripAnsi(slow[0]!)).toBe("✓ x {} 12s");
    expect(slow[0]).toContain("\u001b[2m12s");
    expect(toolCard(call("x", {}), { text: "ok", durationMs: 999 }, plain, 80)[0]).toBe("✓ x {}");
  });
  it("an error result is red", () => {
    const lines = toolCard(
      call("grep", { pattern: "x" }),
      { text: "Error: bad regex", isError: true },
      colour,
      80,
    );
    expect(lines[1]).toContain("\u001b[31mError: bad regex");
  });
  it("malformed arguments do not throw", () => {
    expect(toolCard({ name: "bash", arguments: "{not json" }, undefined, plain, 80)).toEqual(["• $ "]);
    expect(
      toolCard({ name: "todo_write", arguments: '{"todos":[null,3,{"status":1}]}' }, undefined, plain, 80),
    ).toEqual(["• todo_write todos=[3]"]);
  });
  it("no argument shape throws, and every line fits the width (property)", () => {
    const names = fc.constantFrom("bash", "edit", "write", "apply_patch", "todo_write", "read", "x");
    // Stored details of any kind, well-formed or not (a newer writer, a damaged row).
    const kinds = fc.constantFrom(
      "command",
      "file-change",
      "read",
      "search",
      "todos",
      "subagent",
      "job",
      "fetch",
    );
    const details = fc.oneof(
      fc.jsonValue(),
      fc.dictionary(fc.string(), fc.jsonValue()).chain((extra) => kinds.map((kind) => ({ ...extra, kind }))),
    );
    const result = fc.option(
      fc.record(
        { text: fc.string(), isError: fc.boolean(), details, durationMs: fc.nat() },
        { requiredKeys: ["text"] },
      ),
      { nil: undefined },
    );
    fc.assert(
      fc.property(
        names,
        fc.oneof(fc.json(), fc.string()),
        result,
        fc.integer({ min: 10, max: 200 }),
        (name, args, r, width) => {
          for (const line of toolCard({ name, arguments: args }, r, colour, width)) {
            expect(visibleWidth(line)).toBeLessThanOrEqual(width);
            expect(line).not.toContain("\n");
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
