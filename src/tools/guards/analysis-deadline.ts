/**
 * The deadline of one command analysis (the detector must stay bounded on hostile
 * input), measured in the CPU time this process spends, not in wall-clock time.
 *
 * Invariants:
 * - Within `budgetMs` of wall-clock time the deadline has never passed (the common case costs one
 *   `performance.now()` per check).
 * - After that it passes once this thread has used `budgetMs` of CPU time since the analysis began: a
 *   thread descheduled on a loaded machine (two cores, a test suite beside it) is not charged for the
 *   time it did not run. Wall-clock time made ordinary commands fail closed as `analysis-timeout` under
 *   load, so a harmless `curl` asked for approval. The thread's own time (Linux: the first field of
 *   /proc/thread-self/schedstat, in nanoseconds), not the process's: the process's also counts the
 *   garbage collector's and libuv's threads, which ran a deadline out while the analysis was waiting (a
 *   red CI). Where that file is missing, the process's CPU time.
 * - Past the budget the CPU clock is read at most once a millisecond (a read is a few microseconds).
 * - It always passes after `wallCapMs` of wall-clock time (default 25 × the budget), so a starved
 *   process still fails closed within a bound.
 * - An infinite budget never passes (the parser's warm-up).
 */
import { closeSync, openSync, readSync } from "node:fs";
import { performance } from "node:perf_hooks";

export const WALL_CAP_FACTOR = 25;
const CPU_CHECK_INTERVAL_MS = 1;

/** An open /proc/thread-self/schedstat of this thread (modules are per thread), `null` where there is none. */
let schedstat: number | null | undefined;
const buffer = Buffer.alloc(128);

function threadCpuMs(): number | undefined {
  if (schedstat === undefined) {
    try {
      schedstat = openSync("/proc/thread-self/schedstat", "r");
    } catch {
      schedstat = null;
    }
  }
  if (schedstat === null) return undefined;
  try {
    const n = readSync(schedstat, buffer, 0, buffer.length, 0);
    const ns = Number(buffer.toString("latin1", 0, n).split(" ", 1)[0]);
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  } catch {
    closeSync(schedstat);
    schedstat = null;
    return undefined;
  }
}

/** This thread's CPU time in ms where the system tells it, else the process's. */
export function cpuMs(): number {
  const thread = threadCpuMs();
  if (thread !== undefined) return thread;
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export class AnalysisDeadline {
  private readonly wallStart = performance.now();
  private readonly cpuStart: number;
  private readonly wallCapMs: number;
  private lastCheck = 0;
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
    if (elapsed > this.wallCapMs) {
      this.done = true;
      return true;
    }
    if (elapsed - this.lastCheck < CPU_CHECK_INTERVAL_MS) return false;
    this.lastCheck = elapsed;
    this.done = cpuMs() - this.cpuStart > this.budgetMs;
    return this.done;
  }
}
