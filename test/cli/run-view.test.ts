/**
 * Issue 15: RunView's end summary (tokens from the run's usage, cost only when priced) on a fake terminal.
 */
import { describe, expect, it, vi } from "vitest";
import { MAX_REPAINTS_PER_SECOND, RunView, type TermStream } from "../../src/cli/run-view.js";

function term(isTTY: boolean): TermStream & { text: string } {
  const t = {
    text: "",
    isTTY,
    columns: 120,
    write(s: string) {
      t.text += s;
      return true;
    },
  };
  return t;
}

function view(now = () => 0) {
  const stdout = term(false);
  const stderr = term(false);
  return { stdout, stderr, v: new RunView({ stdout, stderr, env: { NO_COLOR: "1" }, now }) };
}

const usage = { requests: 2, input: 12_000, cachedInput: 3_000, output: 900, reasoning: 0 };

describe("RunView.summary", () => {
  it("prints duration, all input with cached apart, output, cost and how to continue", () => {
    let t = 0;
    const { stderr, v } = view(() => t);
    t = 75_000;
    v.finish();
    v.summary({ sessionId: "s-1", usage, cost: 0.0123 });
    expect(stderr.text).toBe(
      '1m 15s · 15k in (3k cached) · 900 out · 2 requests · $0.01\nsession s-1 · continue: bdsh run --session s-1 "…" or bdsh chat --session s-1\n',
    );
  });

  it("prints no cost when the price is unknown, never $0", () => {
    const { stderr, v } = view();
    v.summary({ sessionId: "s-2", usage, cost: undefined });
    expect(stderr.text.split("\n")[0]).toBe("0s · 15k in (3k cached) · 900 out · 2 requests");
  });

  it("a cheap run shows its cost with the digits that matter", () => {
    const { stderr, v } = view();
    v.summary({ sessionId: "s-3", usage, cost: 0.00054 });
    expect(stderr.text.split("\n")[0]).toBe("0s · 15k in (3k cached) · 900 out · 2 requests · $0.00054");
  });

  it("quiet prints no summary", () => {
    const stdout = term(false);
    const stderr = term(false);
    const v = new RunView({ stdout, stderr, env: {}, quiet: true });
    v.summary({ sessionId: "s-4", usage, cost: 1 });
    expect(stderr.text + stdout.text).toBe("");
  });
});

describe("RunView on a terminal", () => {
  it("holds reply text for the next status frame, and anything on stderr flushes it first, in order", () => {
    vi.useFakeTimers();
    try {
      const stdout = term(true);
      const stderr = term(true);
      const both: string[] = [];
      const tap = (t: ReturnType<typeof term>, name: string) => {
        const write = t.write.bind(t);
        t.write = (s: string) => {
          both.push(`${name}:${s}`);
          return write(s);
        };
      };
      tap(stdout, "out");
      tap(stderr, "err");
      const v = new RunView({ stdout, stderr, env: { NO_COLOR: "1" } });
      v.delta("text", "first line\nsecond ");
      expect(stdout.text).toBe("");
      vi.advanceTimersByTime(1000 / MAX_REPAINTS_PER_SECOND);
      expect(stdout.text).toContain("first line");
      expect(stderr.text).toContain("Ctrl-C to interrupt");
      v.delta("text", "line\nthird line\n");
      v.notice("a notice");
      const out = both.findIndex((w) => w.startsWith("out:") && w.includes("third line"));
      const notice = both.indexOf("err:a notice\n");
      expect(out).toBeGreaterThanOrEqual(0);
      expect(out).toBeLessThan(notice);
      v.finish();
      expect(stdout.text).toContain("second line");
      expect(both.at(-1)).not.toContain("Ctrl-C"); // the status line is cleared at the end
    } finally {
      vi.useRealTimers();
    }
  });
});
