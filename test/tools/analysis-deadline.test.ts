import { describe, expect, it } from "vitest";
import { AnalysisDeadline, cpuMs } from "../../src/tools/guards/analysis-deadline.js";

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: uses CPU time
  }
}

describe("analysis deadline (CPU time, not wall-clock time)", () => {
  it("has not passed within the budget", () => {
    expect(new AnalysisDeadline(50).passed()).toBe(false);
  });

  it("passes once the budget of CPU time is used", () => {
    const deadline = new AnalysisDeadline(5);
    spin(30);
    expect(deadline.passed()).toBe(true);
    expect(deadline.passed()).toBe(true); // stays passed
  });

  it("time the process spends waiting is not charged (a loaded machine does not fail commands closed)", async () => {
    const deadline = new AnalysisDeadline(20);
    await new Promise((resolve) => setTimeout(resolve, 80)); // 80 ms of wall-clock time, almost no CPU
    expect(deadline.passed()).toBe(false);
  });

  it("the wall-clock cap always ends it", async () => {
    const deadline = new AnalysisDeadline(20, 60);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(deadline.passed()).toBe(true);
  });

  it("an infinite budget never passes", () => {
    const deadline = new AnalysisDeadline(Number.POSITIVE_INFINITY);
    spin(5);
    expect(deadline.passed()).toBe(false);
  });
});

describe("the CPU clock", () => {
  it("counts this thread's time: a busy wait shows, a sleep does not", async () => {
    const a = cpuMs();
    spin(30);
    const b = cpuMs();
    await new Promise((resolve) => setTimeout(resolve, 60));
    const c = cpuMs();
    expect(b - a).toBeGreaterThan(5); // a loaded machine may deschedule the spin for part of its 30 ms
    expect(c - b).toBeLessThan(20);
  });
});
