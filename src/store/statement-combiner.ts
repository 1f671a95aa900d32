/**
 * Group commit for a store's writes, and the same gathering for its hottest reads (a thousand agents opening
 * at once each read their own rows: one statement can read them all). At most `inFlight` statements are out at once; a write submitted
 * while they are waits, and every write waiting when one comes back goes out together in the next
 * statement. Alone (one session stepping, a quiet server) a write goes out at once, by itself; under load
 * (a thousand turns ending in the same second) the writes of many sessions share one round trip, one
 * commit and one WAL flush instead of each paying for its own.
 *
 * Writes with the same key (a session) never share a statement, nor go out while one of that key is still
 * out: the second waits for the next statement after the first has come back, so a session's writes keep
 * their order and never race each other on two connections.
 *
 * `run` gets a batch and answers one settled result per write, in order; a rejection of `run` itself
 * fails every write of the batch with that error.
 */
export type CombinerOptions<T, R> = {
  run(batch: readonly T[]): Promise<readonly PromiseSettledResult<R>[]>;
  /** Statements out at once (at least 1). */
  inFlight: number;
  /** Writes in one statement at most (at least 1). */
  maxWrites: number;
  /** Bytes in one statement at most; a single larger write still goes, alone. */
  maxBytes: number;
  /**
   * When the writes made while nothing is out go: `microtask` (default) after the current synchronous
   * work, with the writes made in it; `immediate` after this turn of the event loop, with every write its
   * I/O callbacks made (for a store whose statement runs synchronously, so none is ever out to wait on).
   */
  gather?: "microtask" | "immediate";
};

/**
 * The limits a PostgreSQL store's combiners share (appends, messages, the opening read): two statements out
 * at once, so one can wait on the disk while the next gathers (bench/RESULTS.md tried 1, 2 and 4), and at
 * most 256 writes or 4 MiB in one statement.
 */
export const POOLED_STATEMENTS = { inFlight: 2, maxWrites: 256, maxBytes: 4 * 1024 * 1024 } as const;

type Waiting<T, R> = {
  write: T;
  key: string;
  bytes: number;
  resolve(value: R): void;
  reject(error: unknown): void;
};

export class StatementCombiner<T, R> {
  private waiting: Waiting<T, R>[] = [];
  private out = 0;
  /** Keys of the writes in the statements that are out. */
  private readonly outKeys = new Set<string>();
  private pumpQueued = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: CombinerOptions<T, R>) {}

  /** Queues `write`; it goes out when gathered (`gather`), with whatever else is waiting then. */
  submit(write: T, key: string, bytes: number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ write, key, bytes, resolve, reject });
      if (this.pumpQueued) return;
      this.pumpQueued = true;
      // The rest of this tick's (or loop turn's) writes, other sessions a burst of replies woke, join it.
      const pump = () => {
        this.pumpQueued = false;
        this.pump();
      };
      if (this.options.gather === "immediate") setImmediate(pump);
      else queueMicrotask(pump);
    });
  }

  /** Resolves once every write submitted so far has its answer (a store closing waits for it). */
  idle(): Promise<void> {
    if (this.out === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.out < Math.max(1, this.options.inFlight) && this.waiting.length > 0) {
      const batch = this.take();
      if (batch.length === 0) return; // every waiting write's key is out; its return pumps again
      this.out++;
      for (const entry of batch) this.outKeys.add(entry.key);
      this.send(batch).finally(() => {
        this.out--;
        for (const entry of batch) this.outKeys.delete(entry.key);
        this.pump();
      });
    }
    if (this.out === 0 && this.waiting.length === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** The next batch, oldest first: one write per key, none of a key that is out, within the caps. */
  private take(): Waiting<T, R>[] {
    const batch: Waiting<T, R>[] = [];
    const keys = new Set<string>();
    const left: Waiting<T, R>[] = [];
    let bytes = 0;
    for (const entry of this.waiting) {
      const free = !keys.has(entry.key) && !this.outKeys.has(entry.key);
      const fits =
        free &&
        (batch.length === 0 ||
          (batch.length < Math.max(1, this.options.maxWrites) &&
            bytes + entry.bytes <= this.options.maxBytes));
      if (fits) {
        batch.push(entry);
        keys.add(entry.key);
        bytes += entry.bytes;
      } else {
        left.push(entry);
      }
    }
    this.waiting = left;
    return batch;
  }

  private async send(batch: Waiting<T, R>[]): Promise<void> {
    let results: readonly PromiseSettledResult<R>[];
    try {
      results = await this.options.run(batch.map((entry) => entry.write));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    batch.forEach((entry, i) => {
      const result = results[i];
      if (!result)
        entry.reject(new Error("statement combiner: the batch answered fewer results than writes"));
      else if (result.status === "fulfilled") entry.resolve(result.value);
      else entry.reject(result.reason);
    });
  }
}
