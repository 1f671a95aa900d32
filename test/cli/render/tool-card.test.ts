import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lineDiff } from "../../../src/cli/render/line-diff.js";
import { palette, stripAnsi, visibleWidth } from "../../../src/cli/render/style.js";
import { exitCodeOf, toolCard } from "../../../src/cli/render/tool-card.js";
import { formatBashResult } from "../../../src/tools/bash/bash-result.js";

const plain = palette(false);
const colour = palette(true);
const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });

describe("toolCard: bash", () => {
  const bash = call("bash", { description: "Run the tests", command: "npm test" });

  it("shows the command and its description while it runs", () => {
    expect(toolCard(bash, undefined, plain, 80)).toEqual(["• $ npm test  # Run the tests"]);
  });
  it("a failing command shows its exit code in red and the output tail", () => {
    const text = formatBashResult({ stdout: "ok 1\nnot ok 2\n", stderr: "boom\n", exitCode: 3 });
    const lines = toolCard(bash, { text }, colour, 80);
    expect(stripAnsi(lines[0]!)).toBe("✗ $ npm test  # Run the tests");
    expect(lines.map(stripAnsi)).toEqual([
      "✗ $ npm test  # Run the tests",
      "  │ ok 1",
      "  │ not ok 2",
      "  │ boom",
      "  │ exit 3",
    ]);
    expect(lines.at(-1)).toContain("\u001b[31m");
    expect(exitCodeOf(text)).toBe(3);
  });
  it("a long output keeps its last six lines and counts the rest", () => {
    const stdout = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
    const lines = toolCard(bash, { text: formatBashResult({ stdout, stderr: "" }) }, plain, 80);
    expect(lines[0]).toBe("✓ $ npm test  # Run the tests");
    expect(lines[1]).toBe("  │ … 14 more lines");
    expect(lines.slice(2)).toEqual([15, 16, 17, 18, 19, 20].map((n) => `  │ line ${n}`));
  });
  it("a timeout is a note, not output", () => {
    const text = formatBashResult({ stdout: "", stderr: "", timedOutMs: 1000, signal: "SIGKILL" });
    expect(toolCard(bash, { text }, plain, 80).slice(1)).toEqual([
      "  │ [timed out after 1000ms]",
      "  │ [killed by signal: SIGKILL]",
    ]);
  });
  it("a multi-line command shows its first line", () => {
    expect(toolCard(call("bash", { command: "a\nb\nc" }), undefined, plain, 80)).toEqual([
      "• $ a … (+2 lines)",
    ]);
  });
});

describe("toolCard: edits", () => {
  it("edit shows a unified diff of old_string → new_string, green + and red -", () => {
    const lines = toolCard(
      call("edit", { file_path: "src/a.ts", old_string: "a\nb\nc", new_string: "a\nB\nc" }),
      { text: "The file src/a.ts has been updated successfully." },
      colour,
      80,
    );
    expect(lines.map(stripAnsi)).toEqual([
      "✓ edit src/a.ts +1 -1",
      "  │   a",
      "  │ - b",
      "  │ + B",
      "  │   c",
    ]);
    expect(lines[2]).toContain("\u001b[31m- b");
    expect(lines[3]).toContain("\u001b[32m+ B");
  });
  it("a long diff is cut", () => {
    const old = Array.from({ length: 50 }, (_, i) => `o${i}`).join("\n");
    const lines = toolCard(
      call("edit", { file_path: "f", old_string: old, new_string: "n" }),
      undefined,
      plain,
      80,
    );
    expect(lines.at(-1)).toBe("  │ … 27 more lines");
  });
  it("a failed edit shows the error in red instead of the diff", () => {
    const lines = toolCard(
      call("edit", { file_path: "f", old_string: "x", new_string: "y" }),
      { text: 'Error: old_string was not found in "f"', isError: true },
      colour,
      80,
    );
    expect(lines.map(stripAnsi)).toEqual(["✗ edit f +1 -1", '  │ Error: old_string was not found in "f"']);
    expect(lines[1]).toContain("\u001b[31m");
  });
  it("write shows the new content as added lines", () => {
    expect(
      toolCard(
        call("write", { file_path: "n.txt", content: "one\ntwo\n" }),
        { text: "Created file n.txt" },
        plain,
        80,
      ),
    ).toEqual(["✓ write n.txt 2 lines", "  │ + one", "  │ + two"]);
  });
  it("apply_patch colours the patch it was given", () => {
    const patch = "--- a/x.ts\n+++ b/x.ts\n@@ -1,2 +1,2 @@\n keep\n-old\n+new";
    expect(toolCard(call("apply_patch", { patch }), { text: "ok" }, plain, 80)).toEqual([
      "✓ apply_patch x.ts +1 -1",
      "  │ @@ -1,2 +1,2 @@",
      "  │   keep",
      "  │ - old",
      "  │ + new",
    ]);
  });
});

describe("toolCard: todos and others", () => {
  it("todo_write shows a checklist", () => {
    const todos = [
      { content: "read the code", status: "completed" },
      { content: "fix the bug", status: "in_progress" },
      { content: "add a test", status: "pending" },
    ];
    expect(toolCard(call("todo_write", { todos }), { text: "Updated todo list" }, plain, 80)).toEqual([
      "✓ todo_write",
      "  │ [x] read the code",
      "  │ [~] fix the bug",
      "  │ [ ] add a test",
    ]);
  });
  it("another tool shows its name and a short argument summary", () => {
    expect(
      toolCard(call("read", { file_path: "src/a.ts", offset: 10 }), { text: "1\ta\n2\tb" }, plain, 80),
    ).toEqual(["✓ read src/a.ts offset=10", "  │ 2 lines"]);
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
    ).toEqual(["• todo_write", "  │ [ ] ?", "  │ [ ] ?", "  │ [ ] ?"]);
  });
  it("no argument shape throws, and every line fits the width (property)", () => {
    const names = fc.constantFrom("bash", "edit", "write", "apply_patch", "todo_write", "read", "x");
    const result = fc.option(fc.record({ text: fc.string(), isError: fc.boolean() }), { nil: undefined });
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

describe("lineDiff", () => {
  it("applying the diff to the old text gives the new text (property)", () => {
    const lines = fc.array(fc.constantFrom("a", "b", "c", "d"), { maxLength: 12 });
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const diff = lineDiff(a.join("\n"), b.join("\n"), 1_000);
        expect(diff.filter((d) => d.kind !== "+").map((d) => d.text)).toEqual(a.join("\n") === "" ? [] : a);
        expect(diff.filter((d) => d.kind !== "-").map((d) => d.text)).toEqual(b.join("\n") === "" ? [] : b);
      }),
    );
  });
});
