import { describe, expect, it } from "vitest";
import {
  colorEnabled,
  palette,
  sanitize,
  stripAnsi,
  truncate,
  visibleWidth,
  wrapText,
} from "../../../src/cli/render/style.js";

describe("colorEnabled (NO_COLOR, FORCE_COLOR)", () => {
  it("follows the stream's TTY-ness when neither variable is set", () => {
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
    expect(colorEnabled({}, {})).toBe(false);
  });
  it("NO_COLOR with any non-empty value turns colour off, even with FORCE_COLOR", () => {
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: "1", FORCE_COLOR: "1" })).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: "" })).toBe(true);
  });
  it("FORCE_COLOR=0 turns it off on a TTY; FORCE_COLOR>0 turns it on when piped", () => {
    expect(colorEnabled({ isTTY: true }, { FORCE_COLOR: "0" })).toBe(false);
    expect(colorEnabled({ isTTY: false }, { FORCE_COLOR: "1" })).toBe(true);
    expect(colorEnabled({ isTTY: false }, { FORCE_COLOR: "3" })).toBe(true);
  });
});

describe("palette", () => {
  it("a disabled palette returns its input unchanged", () => {
    const p = palette(false);
    expect(p.red(p.bold("x"))).toBe("x");
  });
  it("an enabled palette wraps in SGR codes that close", () => {
    expect(palette(true).red("x")).toBe("\u001b[31mx\u001b[39m");
    expect(stripAnsi(palette(true).bold(palette(true).cyan("abc")))).toBe("abc");
  });
});

describe("widths", () => {
  it("counts columns without escape codes; wide characters take two", () => {
    expect(visibleWidth(palette(true).green("hello"))).toBe(5);
    expect(visibleWidth("日本")).toBe(4);
  });
  it("truncate cuts to the width with an ellipsis and resets a cut style", () => {
    expect(truncate("abcdefgh", 5)).toBe("abcd…");
    expect(truncate("abc", 5)).toBe("abc");
    const cut = truncate(palette(true).red("abcdefgh"), 4);
    expect(visibleWidth(cut)).toBe(4);
    expect(cut.endsWith("\u001b[0m")).toBe(true);
  });
  it("wrapText keeps every line within the width and long words whole", () => {
    const lines = wrapText("one two three four five six", 10, "- ", "  ");
    expect(lines).toEqual(["- one two", "  three", "  four", "  five six"]);
    expect(wrapText("a-very-long-word x", 5)).toEqual(["a-very-long-word", "x"]);
  });
});

describe("sanitize (model output is untrusted)", () => {
  it("removes escape sequences and control characters", () => {
    expect(sanitize("a\u001b[2Jb\u001b]52;c;ZXZpbA==\u0007c\u0008d")).toBe("abcd");
    expect(sanitize("x\ty")).toBe("x  y");
  });
});
