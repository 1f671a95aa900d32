import { describe, expect, it } from "vitest";
import { AnalysisDeadline, cpuMs } from "../../src/tools/guards/analysis-deadline.js";
import { guard } from "../support/wait.js";

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: uses CPU time
  }
}

/**
 * Busy until this thread has used `ms` of CPU time, whatever share of a core it gets (a loaded machine
 * deschedules it for much of a fixed wall-clock spin); the wall-clock guard only stops a broken clock.
 */
function spinCpu(ms: number): void {
  const start = cpuMs();
  const giveUp = performance.now() + guard(10_000);
  while (cpuMs() - start < ms) {
    if (performance.now() > giveUp) throw new Error(`the CPU clock did not advance ${ms} ms`);
  }
}

describe("analysis deadline (CPU time, not wall-clock time)", () => {
  it("has not passed within the budget", () => {
    expect(new AnalysisDeadline(50).passed()).toBe(false);
  });

  it("passes once the budget of CPU time is used", () => {
    const deadline = new AnalysisDeadline(5);
    spinCpu(10);
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
    spinCpu(10); // a busy wait shows: it ends only once the clock has counted 10 ms
    const b = cpuMs();
    await new Promise((resolve) => setTimeout(resolve, 60));
    const c = cpuMs();
    expect(c - b).toBeLessThan(20);
  });
});
