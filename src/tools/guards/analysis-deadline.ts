/**
 * The deadline of one command analysis (issue 14 finding 6: the detector must stay bounded on hostile
 * input), measured in the CPU time this process spends, not in wall-clock time.
 *
 * Invariants:
 * - Within `budgetMs` of wall-clock time the deadline has never passed (the common case costs one
 *   `performance.now()` per check).
 * - After that it passes once the process has used `budgetMs` of CPU time since the analysis began: a
 *   process descheduled on a loaded machine (two cores, a test suite beside it) is not charged for the
 *   time it did not run. Wall-clock time made ordinary commands fail closed as `analysis-timeout` under
 *   load, so a harmless `curl` asked for approval.
 * - It always passes after `wallCapMs` of wall-clock time (default 25 × the budget), so a starved
 *   process still fails closed within a bound.
 * - An infinite budget never passes (the parser's warm-up).
 */
import { performance } from "node:perf_hooks";

export const WALL_CAP_FACTOR = 25;

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export class AnalysisDeadline {
  private readonly wallStart = performance.now();
  private readonly cpuStart: number;
  private readonly wallCapMs: number;
  private done = false;

  constructor(
    private readonly budgetMs: number,
    wallCapMs?: number,
  ) {
    this.cpuStart = Number.isFinite(budgetMs) ? cpuMs() : 0;
    this.wallCapMs = wallCapMs ?? budgetMs * WALL_CAP_FACTOR;
  }

  passed(): boolean {
    if (this.done) return true;
    if (!Number.isFinite(this.budgetMs)) return false;
    const elapsed = performance.now() - this.wallStart;
    if (elapsed <= this.budgetMs) return false;
    this.done = elapsed > this.wallCapMs || cpuMs() - this.cpuStart > this.budgetMs;
    return this.done;
  }
}
