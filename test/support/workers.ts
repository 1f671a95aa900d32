/**
 * How many test files run at once (`BDSH_TEST_WORKERS`, default 2: the suite spends much of its time
 * waiting on child processes and servers, so two files overlap well even on two cores). Each worker gets
 * a PostgreSQL database of its own (support/database.ts), so servers in files that run side by side never
 * claim or repair each other's sessions.
 */
export const TEST_WORKERS = workers(process.env.BDSH_TEST_WORKERS);

function workers(raw: string | undefined): number {
  const value = Number(raw ?? 2);
  return Number.isInteger(value) && value >= 1 ? value : 2;
}
