/**
 * What one served turn asks of the store (issue 36, "fewer, cheaper store round trips per turn"), counted
 * by Store method on both stores: a message to an idle session whose agent is cached here is queued, its
 * session claimed and the drive's read made in one call (`enqueueAndClaim`: no claim pass, no
 * `readForDrive`, no `acquireLease`, no `takeCancelRequests`), step 1 appends before its request, the
 * turn's end is appended, and the drive's last append (the idle status) lets go of the lease itself (no
 * `releaseLease`). The round trips themselves are counted by bench/serve/statements.ts.
 *
 * On SQLite the inbox notification is delivered in process as the row is written, so the count of claim
 * passes is exact there; on PostgreSQL it arrives on the listener connection at its own moment (after the
 * drive has ended, it rightly makes a pass), so only what never depends on it is asserted.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";
import { startFakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
import { waitUntil } from "../support/wait.js";
import { api, startServer, testConfig, tmpHome, turnEnd, waitForEvent } from "./harness.js";

/** The store, with every Store method call counted by name, and the names in the order of the calls. */
function counted(store: Store): { store: Store; calls: Map<string, number>; order: string[] } {
  const calls = new Map<string, number>();
  const order: string[] = [];
  const proxy = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== "function" || typeof key !== "string") return value;
      return (...args: unknown[]) => {
        calls.set(key, (calls.get(key) ?? 0) + 1);
        order.push(key);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls, order };
}

/**
 * The claim passes a runner made from call `from` on that a wake started, not a sweep. A pass is one
 * `claimPendingSessions`, preceded in the same pass by `claimOrphanedSessions` when it is a sweep (the
 * listener's (re)connect, a lease seen lapsing, the interval): passes never overlap, so the claim call just
 * before a pending-session claim tells which it was.
 */
function wokenPasses(order: readonly string[], from: number): number {
  const claims = order
    .map((name, index) => ({ name, index }))
    .filter(({ name }) => name === "claimPendingSessions" || name === "claimOrphanedSessions");
  return claims.filter(
    ({ name, index }, i) =>
      name === "claimPendingSessions" && index >= from && claims[i - 1]?.name !== "claimOrphanedSessions",
  ).length;
}

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe.each([
  { name: "sqlite", databaseUrl: undefined as (() => string) | undefined },
  { name: "postgres", databaseUrl: () => testDatabaseUrl() },
])("a served message's store calls ($name)", ({ name, databaseUrl }) => {
  it("queue, claim and the drive's read in one call; the last append lets go of the lease", async () => {
    const { home, workspace } = tmpHome("bdsh-store-calls-");
    const raw = await openStore({ home, ...(databaseUrl ? { databaseUrl: databaseUrl() } : {}) });
    cleanup.push(() => raw.close());
    const fake = await startFakeProvider({ script: () => ({ text: "Done." }) });
    cleanup.push(() => fake.close());
    const { store, calls } = counted(raw);
    // No periodic sweep inside the counted turn: its passes would be counted with the message's.
    const config = testConfig(fake.url, { sweep_interval_ms: 600_000 });
    const server = await startServer({ store, config, home, workspace });
    cleanup.push(() => server.app.close());
    // PostgreSQL: a second server on the same database, which hears every inbox notification.
    const other = databaseUrl ? counted(await openStore({ home, databaseUrl: databaseUrl() })) : undefined;
    if (other) {
      cleanup.push(() => other.store.close());
      const second = await startServer({ store: other.store, config, home, workspace, owner: "other" });
      cleanup.push(() => second.app.close());
    }
    const created = await api(server.url, "POST", "/v1/sessions", {}, server.auth);
    const id = String(created.body.id);

    /** Sends a message; resolves once its turn ended and the drive let go of the lease. */
    const turn = async (n: number) => {
      const sent = await api(server.url, "POST", `/v1/sessions/${id}/messages`, { text: "hi" }, server.auth);
      expect(sent.status).toBe(202);
      await waitForEvent(raw, id, (e) => turnEnd(e) && e.turn === n);
      await waitUntil(
        async () => (await raw.getLease(sessionLeaseName(id))) === undefined,
        "the drive to let go of the lease",
      );
    };
    calls.clear();
    await turn(1); // opens the agent: cached from here
    // The opener takes the row the claim read, and the plugins setting up (subagents) read that row.
    expect(calls.get("enqueueAndClaim")).toBe(1);
    expect(calls.get("getSession") ?? 0).toBe(0);
    expect(calls.get("updateSession") ?? 0).toBe(0); // the title's append sets the row's title
    calls.clear();
    const otherFrom = other?.order.length ?? 0;
    await turn(2);
    // The row was announced as claimed with it: nothing woke the other server to a claim pass. It may still
    // sweep on its own (its listener connects on its own time), which is not what a message caused.
    if (other) expect(wokenPasses(other.order, otherFrom)).toBe(0);
    // Queue, claim and the drive's read: one call. The archived guard's look at the row is that read.
    expect(calls.get("enqueueAndClaim")).toBe(1);
    expect(calls.get("enqueueInbox") ?? 0).toBe(0);
    expect(calls.get("readForDrive") ?? 0).toBe(0);
    expect(calls.get("acquireLease") ?? 0).toBe(0);
    expect(calls.get("read") ?? 0).toBe(0);
    expect(calls.get("getSession") ?? 0).toBe(0);
    // Input to a session driving here is not a reason to look for a cancel request.
    expect(calls.get("takeCancelRequests") ?? 0).toBe(0);
    // Step 1 (with the inbox claim), the turn's end, the idle status with the lease's release.
    expect(calls.get("append")).toBe(3);
    expect(calls.get("releaseLease") ?? 0).toBe(0);
    if (name === "sqlite") {
      expect(calls.get("claimPendingSessions") ?? 0).toBe(0);
      // The claim read the inbox with the message in it: neither the drive nor the runner looks again.
      expect(calls.get("pendingInbox") ?? 0).toBe(0);
    }
  });
});
