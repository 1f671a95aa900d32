/**
 * Issue 16 item 7: the one lease helper, on both stores. Held: renewed past its TTL; lost (lapsed and
 * taken by another owner): the signal aborts and renewals stop; busy: undefined, or the lease once the
 * holder lets go within `waitMs`; released once.
 */
import { afterEach, describe, expect, it } from "vitest";
import { newEvent } from "../../src/log/events.js";
import { holdLease, type LeaseStore, withLease } from "../../src/store/hold-lease.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";
import { testDatabaseUrl } from "../support/database.js";
import { waitUntil } from "../support/wait.js";
import { type FreshDatabase, postgresHarness, sqliteHarness } from "./harness.js";

let fresh: FreshDatabase | undefined;
afterEach(async () => {
  await fresh?.dispose(); // closes the stores it opened
  fresh = undefined;
});

for (const harness of [() => sqliteHarness(), () => postgresHarness(testDatabaseUrl())]) {
  describe(`holdLease on ${harness().name}`, () => {
    async function open(): Promise<Store> {
      fresh ??= await harness().fresh();
      return fresh.open();
    }

    it("keeps the lease past its TTL while held, and frees it on release", async () => {
      const a = await open();
      const b = await open();
      const ttl = 1_000;
      const held = await holdLease(a, "job:x", "A", ttl);
      expect(held?.lease?.owner).toBe("A");
      // Held past three TTLs of its first expiry: only the heartbeat's renewals can have kept it.
      const firstExpiry = held!.lease!.expiresAt;
      await waitUntil(
        async () => ((await b.getLease("job:x"))?.expiresAt ?? 0) >= firstExpiry + 2 * ttl,
        "the heartbeat to renew the lease past two more TTLs",
        { everyMs: 50 },
      );
      expect(await b.acquireLease("job:x", "B", ttl)).toBeUndefined();
      expect(held!.signal.aborted).toBe(false);
      await held!.release();
      await held!.release(); // once
      expect((await b.acquireLease("job:x", "B", 300))?.owner).toBe("B");
    });

    it("lets a write of its own release it (releaseBy), and releases it anyway when that write fails", async () => {
      const a = await open();
      const s = await a.createSession();
      const name = sessionLeaseName(s.id);
      const held = await holdLease(a, name, "A", 60_000);
      let releases = 0;
      await held!.releaseBy(async () => {
        await a.append(s.id, [newEvent("step/start", {}, { turn: 1, step: 1 })], 0, {
          leaseOwner: "A",
          releaseLease: true,
        });
      });
      await held!.release(); // once: the write let go already
      expect(await a.getLease(name)).toBeUndefined();
      const again = await holdLease(
        {
          acquireLease: (...args) => a.acquireLease(...args),
          renewLease: (...args) => a.renewLease(...args),
          releaseLease: (...args) => {
            releases++;
            return a.releaseLease(...args);
          },
          getLease: (...args) => a.getLease(...args),
        } satisfies LeaseStore,
        name,
        "A",
        60_000,
      );
      await expect(again!.releaseBy(() => Promise.reject(new Error("the append failed")))).rejects.toThrow(
        "the append failed",
      );
      expect(releases).toBe(1);
      expect(await a.getLease(name)).toBeUndefined();
    });

    it("adopts a lease its caller has just claimed without acquiring it again, and renews it", async () => {
      const a = await open();
      const b = await open();
      const ttl = 3_000;
      let acquires = 0;
      const counted: LeaseStore = {
        acquireLease: (...args) => {
          acquires++;
          return a.acquireLease(...args);
        },
        renewLease: (...args) => a.renewLease(...args),
        releaseLease: (...args) => a.releaseLease(...args),
        getLease: (...args) => a.getLease(...args),
      };
      const claimedAt = Date.now();
      expect(await a.acquireLease("session:z", "A", ttl)).toBeDefined(); // the caller's claim
      const held = await holdLease(counted, "session:z", "A", ttl, { claimedAt });
      expect(acquires).toBe(0);
      expect(held?.lease).toBeUndefined();
      const claimedUntil = (await b.getLease("session:z"))!.expiresAt;
      await waitUntil(
        async () => ((await b.getLease("session:z"))?.expiresAt ?? 0) > claimedUntil,
        "the heartbeat to renew the adopted lease",
        { everyMs: 50 },
      );
      await held!.release();
      expect(await b.getLease("session:z")).toBeUndefined();
      // A claim older than a third of the TTL may be near its end: acquired anew.
      const stale = await holdLease(counted, "session:z", "A", ttl, { claimedAt: Date.now() - ttl });
      expect(acquires).toBe(1);
      expect(stale?.lease?.owner).toBe("A");
      await stale!.release();
    });

    it("aborts the signal when another owner took the lease, and stops renewing", async () => {
      const a = await open();
      const b = await open();
      const held = await holdLease(a, "session:y", "A", 300);
      expect(held).toBeDefined();
      // Another owner takes it as if A had lapsed (its process stalled): the next renewal finds it gone.
      await fresh!.exec(
        fresh!.target.kind === "sqlite"
          ? "UPDATE leases SET owner = 'B', fence = fence + 1, expires_at = expires_at + 600000 WHERE name = 'session:y'"
          : "UPDATE leases SET owner = 'B', fence = fence + 1, expires_at = now() + interval '10 minutes' WHERE name = 'session:y'",
      );
      await waitUntil(() => held!.signal.aborted, "the next renewal to find the lease gone");
      expect((await b.getLease("session:y"))?.owner).toBe("B");
      await held!.release(); // releasing a lease it no longer holds leaves B's alone
      expect((await b.getLease("session:y"))?.owner).toBe("B");
    });

    it("is busy while another owner holds it, and waits for it with waitMs", async () => {
      const a = await open();
      const b = await open();
      const first = await holdLease(a, "compaction:z", "A", 5_000);
      expect(await holdLease(b, "compaction:z", "B", 5_000)).toBeUndefined();
      setTimeout(() => void first!.release(), 200);
      const second = await holdLease(b, "compaction:z", "B", 5_000, { waitMs: 60_000 });
      expect(second?.lease?.owner).toBe("B");
      await second!.release();
    });

    it("withLease runs the body holding the lease and releases it after, even when the body throws", async () => {
      const a = await open();
      expect(
        await withLease(a, "l", "A", 5_000, async (signal) => {
          expect(signal.aborted).toBe(false);
          expect((await a.getLease("l"))?.owner).toBe("A");
          return 7;
        }),
      ).toBe(7);
      await expect(
        withLease(a, "l", "A", 5_000, async () => {
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect((await a.acquireLease("l", "B", 5_000))?.owner).toBe("B");
      expect(await withLease(a, "l", "A", 5_000, async () => 1)).toBeUndefined();
    });
  });
}
