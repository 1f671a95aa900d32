/**
 * What one served turn asks of the store (issue 36, "fewer, cheaper store round trips per turn"), counted
 * by Store method on both stores: a message to an idle session whose agent is cached here makes one claim
 * pass (the route's wake and the inbox notification of the same row do not make two), the claim takes the
 * session's cancel requests (no `takeCancelRequests` of the drive's own; input is not a reason to look for
 * one), the drive adopts the lease the claim took (no `acquireLease`), reads the log, the inbox and the
 * session row in one call, and, having read the inbox after the message's wake, leaves neither itself nor
 * the runner a second look at it. The round trips themselves are counted by bench/serve/statements.ts.
 *
 * On SQLite the inbox notification is delivered in process as the row is written, so the count of claim
 * passes is exact there; on PostgreSQL it arrives on the listener connection at its own moment (it may
 * even come after the pass, which then rightly runs again), so only what never depends on it is asserted.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { startFakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
import { waitUntil } from "../support/wait.js";
import { api, startServer, testConfig, tmpHome, turnEnd, waitForEvent } from "./harness.js";

/** The store, with every Store method call counted by name. */
function counted(store: Store): { store: Store; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== "function" || typeof key !== "string") return value;
      return (...args: unknown[]) => {
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe.each([
  { name: "sqlite", databaseUrl: undefined as (() => string) | undefined },
  { name: "postgres", databaseUrl: () => testDatabaseUrl() },
])("a served message's store calls ($name)", ({ name, databaseUrl }) => {
  it("one claim pass, cancel requests taken by the claim, the claimed lease adopted by the drive", async () => {
    const { home, workspace } = tmpHome("bdsh-store-calls-");
    const raw = await openStore({ home, ...(databaseUrl ? { databaseUrl: databaseUrl() } : {}) });
    cleanup.push(() => raw.close());
    const fake = await startFakeProvider({ script: () => ({ text: "Done." }) });
    cleanup.push(() => fake.close());
    const { store, calls } = counted(raw);
    const server = await startServer({ store, config: testConfig(fake.url), home, workspace });
    cleanup.push(() => server.app.close());
    const created = await api(server.url, "POST", "/v1/sessions", {}, server.auth);
    const id = String(created.body.id);

    /** Sends a message; resolves once its turn ended and the drive released the lease. */
    const turn = async (n: number) => {
      const released = calls.get("releaseLease") ?? 0;
      const sent = await api(server.url, "POST", `/v1/sessions/${id}/messages`, { text: "hi" }, server.auth);
      expect(sent.status).toBe(202);
      await waitForEvent(raw, id, (e) => turnEnd(e) && e.turn === n);
      await waitUntil(() => (calls.get("releaseLease") ?? 0) > released, "the drive to release the lease");
    };
    calls.clear();
    await turn(1); // opens the agent: cached from here
    // Opening reads the row once; the plugins setting up (subagents) read that row, not the store.
    expect(calls.get("getSession")).toBe(1);
    calls.clear();
    await turn(2);
    expect(calls.get("acquireLease") ?? 0).toBe(0);
    expect(calls.get("claimPendingSessions")).toBeGreaterThanOrEqual(1);
    // Input to a session driving here is not a reason to look for a cancel request.
    expect(calls.get("takeCancelRequests") ?? 0).toBe(0);
    // The route's enqueue checks the session itself (unknown, archived); the drive reads the log, the inbox
    // and the session row in one call, and the archived guard's look at the row is that read.
    expect(calls.get("enqueueInbox")).toBe(1);
    expect(calls.get("readForDrive")).toBe(1);
    expect(calls.get("read") ?? 0).toBe(0);
    expect(calls.get("getSession") ?? 0).toBe(0);
    if (name === "sqlite") {
      expect(calls.get("claimPendingSessions")).toBe(1);
      // The drive read the inbox after the message's wake: neither it nor the runner looks again.
      expect(calls.get("pendingInbox") ?? 0).toBe(0);
    }
  });
});
