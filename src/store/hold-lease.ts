/**
 * One way to hold a lease: take it, renew it by heartbeat, and say when it is lost.
 * The agent's session lease (L1: one driver per session), the compaction lock (C9), a manual compaction's
 * session lease (C11) and a background job's lease (T9) all use it.
 *
 * Invariants:
 * - `holdLease` returns undefined when another owner holds the lease live (after waiting up to `waitMs`
 *   for it, polling about as often as the holder's remaining time suggests, at most every 250 ms).
 * - While held, the lease is renewed every third of its TTL (at least every 50 ms apart). A renewal that
 *   finds the lease gone (lapsed and taken, or released by someone else) or fails aborts `signal` and
 *   stops renewing: the holder must stop writing, since the next owner's fence rejects its appends anyway.
 * - `release()` stops the heartbeat and releases the lease (once; errors are swallowed: a lease that cannot
 *   be released lapses by its TTL). `releaseBy(write)` stops the heartbeat and lets `write` release it as
 *   part of a write of its own (an append with `releaseLease`: one round trip for both); should `write`
 *   throw, the lease is released the usual way and the error is passed on.
 * - A lease the caller has just claimed (`claimedAt`) is adopted without a second acquire while it is fresh:
 *   renewing every third of the TTL from the adoption keeps it live all the same.
 * - The heartbeat timer never keeps the process alive.
 */
import type { Lease, Store } from "./store.js";

export type HeldLease = {
  /** As acquired; undefined when the holder adopted a lease it had just claimed (`claimedAt`). */
  readonly lease: Lease | undefined;
  /** Aborted when a renewal finds the lease lost. */
  readonly signal: AbortSignal;
  release(): Promise<void>;
  releaseBy(write: () => Promise<void>): Promise<void>;
};

export type HoldLeaseOptions = {
  /** How long to wait for a live holder to let go (default 0: try once). */
  waitMs?: number;
  /**
   * The caller took this lease itself a moment ago, at this `Date.now()` (a claim pass,
   * Store.claimPendingSessions): while less than a third of the TTL has passed it is held as it is, without
   * an acquire of its own (one round trip fewer per claimed drive), and the heartbeat renews it from here,
   * well before it can lapse. Older, it is acquired as usual.
   */
  claimedAt?: number;
};

export type LeaseStore = Pick<Store, "acquireLease" | "renewLease" | "releaseLease" | "getLease">;

export async function holdLease(
  store: LeaseStore,
  name: string,
  owner: string,
  ttlMs: number,
  options: HoldLeaseOptions = {},
): Promise<HeldLease | undefined> {
  const adopted = options.claimedAt !== undefined && Date.now() - options.claimedAt < ttlMs / 3;
  const lease = adopted ? undefined : await acquire(store, name, owner, ttlMs, options.waitMs ?? 0);
  if (!lease && !adopted) return undefined;
  const lost = new AbortController();
  const heartbeat = setInterval(
    () => {
      store.renewLease(name, owner, ttlMs).then(
        (renewed) => {
          if (!renewed) lose();
        },
        () => lose(),
      );
    },
    Math.max(50, Math.floor(ttlMs / 3)),
  );
  heartbeat.unref();
  const lose = () => {
    clearInterval(heartbeat);
    lost.abort();
  };
  let released: Promise<void> | undefined;
  const releaseOnce = (write: () => Promise<void>) => {
    released ??= (async () => {
      clearInterval(heartbeat);
      try {
        await write();
      } catch (error) {
        await store.releaseLease(name, owner).catch(() => undefined);
        throw error;
      }
    })();
    return released;
  };
  return {
    lease,
    signal: lost.signal,
    release: () =>
      releaseOnce(() => store.releaseLease(name, owner).then(() => undefined)).catch(() => undefined),
    releaseBy: releaseOnce,
  };
}

/** Runs `body` holding the lease; undefined (and `body` not run) when another owner holds it. */
export async function withLease<T>(
  store: LeaseStore,
  name: string,
  owner: string,
  ttlMs: number,
  body: (signal: AbortSignal) => Promise<T>,
  options: HoldLeaseOptions = {},
): Promise<T | undefined> {
  const held = await holdLease(store, name, owner, ttlMs, options);
  if (!held) return undefined;
  try {
    return await body(held.signal);
  } finally {
    await held.release();
  }
}

async function acquire(
  store: LeaseStore,
  name: string,
  owner: string,
  ttlMs: number,
  waitMs: number,
): Promise<Lease | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const lease = await store.acquireLease(name, owner, ttlMs);
    if (lease || Date.now() >= deadline) return lease;
    const holder = await store.getLease(name);
    const wait = holder ? Math.min(Math.max(holder.expiresAt - Date.now(), 20), 250) : 20;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
