import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MarkdownStream, renderMarkdown } from "../../../src/cli/render/markdown.js";
import { palette, stripAnsi } from "../../../src/cli/render/style.js";

const plain = palette(false);
const colour = palette(true);

describe("renderMarkdown", () => {
  it("headings lose their markers and are bold", () => {
    expect(renderMarkdown("# Title\n## Sub", plain, 80)).toBe("Title\nSub\n");
    expect(renderMarkdown("### Three", colour, 80)).toBe("\u001b[1mThree\u001b[22m\n");
  });
  it("bold, italic and inline code", () => {
    expect(renderMarkdown("a **b** *c* _d_ `e*f*`", plain, 80)).toBe("a b c d e*f*\n");
    const out = renderMarkdown("run `npm test` now", colour, 80);
    expect(out).toContain("\u001b[36mnpm test\u001b[39m");
  });
  it("keeps snake_case words and lone asterisks as they are", () => {
    expect(renderMarkdown("use my_var_name and 2 * 3 * 4", plain, 80)).toBe(
      "use my_var_name and 2 * 3 * 4\n",
    );
  });
  it("links read as text (url)", () => {
    expect(renderMarkdown("see [the docs](https://x.dev/a_b_c)", plain, 80)).toBe(
      "see the docs (https://x.dev/a_b_c)\n",
    );
    expect(renderMarkdown("<https://x.dev>", plain, 80)).toBe("https://x.dev\n");
  });
  it("fenced code is boxed with its language and not interpreted", () => {
    const out = renderMarkdown("```ts\nconst a = **b**;\n# not a heading\n```\nafter", plain, 80);
    expect(out).toBe("┌─ ts\n│ const a = **b**;\n│ # not a heading\n└─\nafter\n");
  });
  it("an unclosed fence is closed at the end", () => {
    expect(renderMarkdown("```\ncode", plain, 80)).toBe("┌─\n│ code\n└─\n");
  });
  it("a longer closing fence closes; a shorter one does not", () => {
    expect(renderMarkdown("````\n```\n`````\nx", plain, 80)).toBe("┌─\n│ ```\n└─\nx\n");
  });
  it("lists get bullets and hanging indents; task items a checkbox", () => {
    expect(renderMarkdown("- one\n  * two\n1. first\n- [x] done\n- [ ] open", plain, 80)).toBe(
      "• one\n  • two\n1. first\n[x] done\n[ ] open\n",
    );
    expect(renderMarkdown("- aaa bbb ccc ddd", plain, 10)).toBe("• aaa bbb\n  ccc ddd\n");
  });
  it("quotes and rules", () => {
    expect(renderMarkdown("> quoted *text*\n---", plain, 10)).toBe("│ quoted\n│ text\n──────────\n");
  });
  it("tables line their columns up with a header rule", () => {
    const out = renderMarkdown("| name | n |\n|---|--:|\n| alpha | 1 |\n| b | 22 |\n\nafter", plain, 80);
    expect(out).toBe("name  │ n\n──────┼───\nalpha │ 1\nb     │ 22\n\nafter\n");
  });
  it("a wide table is cut to the width", () => {
    const out = renderMarkdown(`| ${"x".repeat(100)} | y |\n|---|---|\n| a | b |`, plain, 40);
    for (const line of out.split("\n")) expect(line.length).toBeLessThanOrEqual(40);
  });
  it("paragraphs wrap at the width", () => {
    expect(renderMarkdown("aaa bbb ccc", plain, 7)).toBe("aaa bbb\nccc\n");
  });
  it("escape sequences in the text never reach the terminal", () => {
    expect(renderMarkdown("hi\u001b[2J\u001b]0;owned\u0007 there", colour, 80)).toBe("hi there\n");
  });
  it("empty text renders as nothing", () => {
    expect(renderMarkdown("", plain, 80)).toBe("");
  });
});

describe("MarkdownStream", () => {
  it("prints a line once it is complete", () => {
    const stream = new MarkdownStream(plain, 80);
    expect(stream.push("# Hea")).toBe("");
    expect(stream.push("ding\nnext")).toBe("Heading\n");
    expect(stream.flush()).toBe("next\n");
  });
  it("tracks a fence across deltas", () => {
    const stream = new MarkdownStream(plain, 80);
    const out = [
      stream.push("``"),
      stream.push("`py\n# x"),
      stream.push("\n``"),
      stream.push("`\n"),
      stream.flush(),
    ];
    expect(out.join("")).toBe("┌─ py\n│ # x\n└─\n");
  });
  it("holds a table until it ends", () => {
    const stream = new MarkdownStream(plain, 80);
    expect(stream.push("| a | b |\n|---|---|\n")).toBe("");
    expect(stream.push("| 1 | 2 |\ntext\n")).toBe("a │ b\n──┼──\n1 │ 2\ntext\n");
  });

  const markdownText = fc
    .array(
      fc.constantFrom(
        "# Head",
        "## Sub **b**",
        "plain words here and more words to wrap around",
        "- item `code`",
        "  1. nested *em*",
        "- [x] done",
        "> quote",
        "```ts",
        "```",
        "~~~",
        "| a | b |",
        "|---|---|",
        "| 1 | 22 |",
        "---",
        "",
        "see [x](https://y.z) and <https://q.r>",
        "tab\there\r",
        "日本語 wide",
      ),
      { maxLength: 25 },
    )
    .map((lines) => lines.join("\n"));

  it("any split of the deltas gives the output of the whole text (property)", () => {
    fc.assert(
      fc.property(
        markdownText,
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.boolean(),
        (text, cuts, coloured) => {
          const p = palette(coloured);
          const whole = renderMarkdown(text, p, 40);
          const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
          const stream = new MarkdownStream(p, 40);
          let out = "";
          let from = 0;
          for (const point of [...points, text.length]) {
            out += stream.push(text.slice(from, point));
            from = point;
          }
          out += stream.flush();
          expect(out).toBe(whole);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("plain rendering keeps every word of ordinary prose (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z]{1,12}$/), { minLength: 1, maxLength: 40 }), (words) => {
        const out = stripAnsi(renderMarkdown(words.join(" "), plain, 30));
        expect(out.split(/\s+/).filter(Boolean)).toEqual(words);
      }),
    );
  });
});
