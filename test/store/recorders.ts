/**
 * What a store's group commit sent, recorded by the tests that enter its batch paths (statement-combiner.ts):
 * the size of each batch a combiner ran, and on PostgreSQL the names of the statements its pool ran.
 */
import type pg from "pg";
import type { Store } from "../../src/store/store.js";

type Combiner = { options: { run(batch: unknown[]): unknown } };

/**
 * Records the size of every batch `store`'s `which` combiner sends (PostgreSQL: `appends` or `intake`).
 * SQLite has one combiner for both, `writes`, which is recorded whichever is named.
 */
export function recordBatches(store: Store, which: "appends" | "intake", into: number[]): void {
  const combiners = store as unknown as Record<string, Combiner | undefined>;
  const options = (combiners.writes ?? combiners[which])!.options;
  const run = options.run;
  options.run = (batch) => {
    into.push(batch.length);
    return run(batch);
  };
}

/** Records the names starting with `prefix` of the statements `store`'s pool runs (PostgreSQL). */
export function recordStatements(store: Store, prefix: string, into: string[]): void {
  const pool = (store as unknown as { pool: pg.Pool }).pool;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const name = (args[0] as { name?: string }).name;
    if (name?.startsWith(prefix)) into.push(name);
    return query(...args);
  };
}

/**
 * Both records of one combiner, as the group-commit tests take them: the size of every batch it sends, and
 * on PostgreSQL the names of its pool's statements that start with `prefix`.
 */
export function recordCombiner(
  store: Store,
  storeName: string,
  which: "appends" | "intake",
  prefix: string,
): { batches: number[]; statements: string[] } {
  const batches: number[] = [];
  const statements: string[] = [];
  recordBatches(store, which, batches);
  if (storeName === "PostgreSQL") recordStatements(store, prefix, statements);
  return { batches, statements };
}
