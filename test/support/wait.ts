/**
 * Waiting in tests: every wait ends on a condition the code under test produces (a stored event, a line of
 * output, a screen); the deadline is only a guard against hanging, generous for a loaded machine and
 * multiplied by `BDSH_TEST_TIME_SCALE` (default 1; `npm run test:stress` raises it).
 */
export const TIME_SCALE = timeScale(process.env.BDSH_TEST_TIME_SCALE);

function timeScale(raw: string | undefined): number {
  const value = Number(raw ?? 1);
  return Number.isFinite(value) && value >= 1 ? value : 1;
}

/** A failure guard of `ms` on a quiet machine, scaled for this run. */
export function guard(ms: number): number {
  return Math.round(ms * TIME_SCALE);
}

export type WaitOptions = {
  /** The guard before giving up, before scaling (default 30 s). */
  timeoutMs?: number;
  /** How often the condition is looked at (default 10 ms). */
  everyMs?: number;
  /** Called on timeout for what the error should show (the screen, the last events). */
  describe?: () => string | Promise<string>;
};

/**
 * Resolves with the first truthy value `probe` returns; rejects naming `what` when the guard runs out or
 * when `probe` throws.
 */
export async function waitUntil<T>(
  probe: () => T | Promise<T>,
  what: string,
  options: WaitOptions = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + guard(options.timeoutMs ?? 30_000);
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) {
      const detail = options.describe ? `\n${await options.describe()}` : "";
      throw new Error(`timed out waiting for ${what}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 10));
  }
}
