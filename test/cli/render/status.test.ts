import { describe, expect, it } from "vitest";
import {
  formatCost,
  formatElapsed,
  formatTokens,
  SPINNER_FRAMES,
  statusLine,
} from "../../../src/cli/render/status.js";
import { palette, visibleWidth } from "../../../src/cli/render/style.js";

const plain = palette(false);

describe("statusLine", () => {
  it("shows spinner, activity, elapsed time, tokens, cost and the hint", () => {
    const line = statusLine(
      {
        frame: 0,
        elapsedMs: 12_300,
        activity: "thinking",
        tokens: 3412,
        cost: 0.012,
        hint: "Esc to interrupt",
      },
      plain,
      120,
    );
    expect(line).toBe("⠋ thinking · 12s · 3.4k tokens · $0.01 · Esc to interrupt");
  });
  it("leaves out tokens and cost that are not known", () => {
    expect(statusLine({ frame: 1, elapsedMs: 0, activity: "running bash" }, plain, 80)).toBe(
      `${SPINNER_FRAMES[1]} running bash · 0s`,
    );
  });
  it("is cut to the width (one column kept free against auto-wrap)", () => {
    const line = statusLine({ frame: 3, elapsedMs: 5000, activity: "x".repeat(200) }, palette(true), 40);
    expect(visibleWidth(line)).toBe(39);
  });
  it("any frame number picks a frame", () => {
    expect(statusLine({ frame: -1, elapsedMs: 0, activity: "a" }, plain, 80)).toContain(
      SPINNER_FRAMES.at(-1)!,
    );
    expect(statusLine({ frame: 13, elapsedMs: 0, activity: "a" }, plain, 80)).toContain(SPINNER_FRAMES[3]!);
  });
});

describe("formats", () => {
  it("elapsed", () => {
    expect([950, 12_400, 75_000, 3_725_000].map(formatElapsed)).toEqual(["0s", "12s", "1m 15s", "1h 2m"]);
  });
  it("tokens", () => {
    expect([950, 3412, 12_900, 1_250_000].map(formatTokens)).toEqual(["950", "3.4k", "12.9k", "1.3M"]);
  });
  it("cost keeps a sub-cent run visible", () => {
    expect(formatCost(0.0012)).toBe("$0.0012");
    expect(formatCost(1.5)).toBe("$1.50");
    expect(formatCost(0)).toBe("$0.00");
  });
});
