/**
 * The PostgreSQL database of the test worker running this file: one per worker, made by the global setup
 * and dropped after the run, so files that run at the same time never share one.
 */
import { inject } from "vitest";

export function testDatabaseUrl(): string {
  const urls = inject("databaseUrls");
  const pool = Number(process.env.VITEST_POOL_ID ?? 1);
  return urls[(Math.max(1, pool) - 1) % urls.length]!;
}
