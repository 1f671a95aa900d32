/**
 * Group commit for messages, on both stores: `enqueueAndClaim` calls of many sessions made at once go out
 * together (PostgreSQL: one statement, `SQL.enqueueAndClaimBatch`; SQLite: the store's one transaction per
 * turn of the event loop, a savepoint each), and each message is queued, claimed, read or refused exactly
 * as it would be alone. The batch path is entered by making the calls in one tick; the batches the store's
 * combiner sends are recorded to show that it was.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewEvent } from "../../src/log/events.js";
import {
  type EnqueuedClaim,
  type NewInboxItem,
  SessionArchivedError,
  SessionNotFoundError,
  type Store,
  type StoreNotification,
  sessionLeaseName,
} from "../../src/store/store.js";
import { waitUntil } from "../support/wait.js";
import { bothStores, type FreshDatabase } from "./harness.js";
import { recordCombiner } from "./recorders.js";

const TTL = 60_000;

describe.each(bothStores())("messages with their claim, together, on %s", (storeName, harness) => {
  let db: FreshDatabase;
  let store: Store;
  let batches: number[];
  let statements: string[];

  beforeEach(async () => {
    db = await harness.fresh();
    store = await db.open();
    ({ batches, statements } = recordCombiner(store, storeName, "intake", "bdsh_enqueue"));
  });

  afterEach(async () => {
    await db.dispose();
  });

  const message = (text: string): NewInboxItem => ({
    queue: "next-turn",
    mode: "followup",
    source: "human",
    text,
  });
  const status: NewEvent = { type: "agent/status", data: { status: "running" } };
  const reset = () => {
    batches.length = 0;
    statements.length = 0;
  };
  const sentTogether = (n: number) => {
    expect(batches).toEqual([n]);
    if (storeName === "PostgreSQL") expect(statements).toEqual(["bdsh_enqueue_and_claim_batch"]);
  };

  async function sessions(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await store.createSession({ title: `s${i}` })).id);
    return ids;
  }

  it("queues many sessions' messages made at once, each claimed and read as alone, in one write (L4: the durable inbox)", async () => {
    const ids = await sessions(8);
    // Sessions 0–3 have a stored event; 4 and 5 are driven by another server; 6 has input waiting already.
    for (const id of ids.slice(0, 4)) await store.append(id, [status], 0);
    for (const id of ids.slice(4, 6)) await store.acquireLease(sessionLeaseName(id), "server-b", TTL);
    const earlier = await store.enqueueInbox(ids[6]!, message("earlier"));
    reset();

    const results = await Promise.all(
      ids.map((id, i) =>
        store.enqueueAndClaim(id, message(`to ${i}`), { owner: "server-a", ttlMs: TTL, after: 0 }),
      ),
    );
    sentTogether(8);

    for (const [i, id] of ids.entries()) {
      const { item, claimed } = results[i] as EnqueuedClaim;
      expect([item.sessionId, item.text]).toEqual([id, `to ${i}`]);
      if (i === 4 || i === 5) {
        expect(claimed).toBeUndefined();
        expect((await store.getLease(sessionLeaseName(id)))?.owner).toBe("server-b");
        continue;
      }
      expect((await store.getLease(sessionLeaseName(id)))?.owner).toBe("server-a");
      expect(claimed?.session?.id).toBe(id);
      expect(claimed?.events.map((e) => [e.sessionId, e.seq])).toEqual(i < 4 ? [[id, 1]] : []);
      expect(claimed?.pending.map((p) => p.text)).toEqual(i === 6 ? ["earlier", `to ${i}`] : [`to ${i}`]);
      expect(claimed?.pending[0]?.id).toBe(i === 6 ? earlier.id : item.id);
    }
    for (const id of ids) expect((await store.pendingInbox(id)).at(-1)?.text).toMatch(/^to /);
  });

  it("fails only the message whose session is missing or refused as archived, with the error it would get alone", async () => {
    const [ok1, archived, archivedAllowed, ok2] = (await sessions(4)) as [string, string, string, string];
    await store.updateSession(archived, { archived: true });
    await store.updateSession(archivedAllowed, { archived: true });
    reset();
    const claim = { owner: "server-a", ttlMs: TTL };
    const results = await Promise.allSettled([
      store.enqueueAndClaim(ok1, message("one"), claim),
      store.enqueueAndClaim("no-such-session", message("lost"), claim),
      store.enqueueAndClaim(archived, message("refused"), claim, { refuseArchived: true }),
      store.enqueueAndClaim(archivedAllowed, message("kept"), claim),
      store.enqueueAndClaim(ok2, message("two"), claim),
    ]);
    sentTogether(5);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    const reason = (r: PromiseSettledResult<unknown>) => (r.status === "rejected" ? r.reason : undefined);
    expect(reason(results[1]!)).toBeInstanceOf(SessionNotFoundError);
    expect(reason(results[2]!)).toBeInstanceOf(SessionArchivedError);
    expect((await store.pendingInbox(archived)).length).toBe(0);
    for (const [id, text] of [
      [ok1, "one"],
      [archivedAllowed, "kept"],
      [ok2, "two"],
    ] as const) {
      expect((await store.pendingInbox(id)).map((p) => p.text)).toEqual([text]);
    }
  });

  it("stores whatever a person or a model wrote byte for byte beside other sessions' messages", async () => {
    const ids = await sessions(4);
    const hostile = [
      "'); DELETE FROM inbox; --",
      'a "quoted" {brace} \\ backslash, NULL, $1',
      "😀 beyond the BMP, and \u202e a direction override",
      "x".repeat(200_000),
    ];
    reset();
    await Promise.all(
      ids.map((id, i) => store.enqueueAndClaim(id, message(hostile[i]!), { owner: "server-a", ttlMs: TTL })),
    );
    sentTogether(4);
    for (const [i, id] of ids.entries()) expect((await store.pendingInbox(id))[0]?.text).toBe(hostile[i]);
  });

  it.runIf(storeName === "PostgreSQL")("lets a message the database refuses fail alone", async () => {
    const ids = await sessions(3);
    reset();
    const results = await Promise.allSettled(
      ids.map((id, i) =>
        store.enqueueAndClaim(id, message(i === 1 ? "a NUL \u0000 inside" : "fine"), {
          owner: "server-a",
          ttlMs: TTL,
        }),
      ),
    );
    // The batch was refused as a whole, then each message ran alone.
    expect(statements).toEqual(["bdsh_enqueue_and_claim_batch", ...ids.map(() => "bdsh_enqueue_and_claim")]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/0x00/);
    expect((await store.pendingInbox(ids[1]!)).length).toBe(0);
    for (const id of [ids[0]!, ids[2]!]) expect((await store.pendingInbox(id)).length).toBe(1);
  });

  it("announces each message, saying whether its session was claimed", async () => {
    const ids = await sessions(4);
    await store.acquireLease(sessionLeaseName(ids[3]!), "server-b", TTL);
    const heard: Array<{ sessionId: string; claimed: boolean }> = [];
    let listening = false;
    store.subscribe((n: StoreNotification) => {
      if (n.channel === "resync") listening = true;
      if (n.channel === "inbox" && n.itemId)
        heard.push({ sessionId: n.sessionId, claimed: n.claimed === true });
    });
    await waitUntil(() => listening, "the store listening");
    reset();
    await Promise.all(
      ids.map((id) => store.enqueueAndClaim(id, message("hi"), { owner: "server-a", ttlMs: TTL })),
    );
    sentTogether(4);
    await waitUntil(() => heard.length === ids.length, "a notification per message");
    expect(heard.sort((a, b) => a.sessionId.localeCompare(b.sessionId))).toEqual(
      ids
        .map((sessionId, i) => ({ sessionId, claimed: i !== 3 }))
        .sort((a, b) => a.sessionId.localeCompare(b.sessionId)),
    );
  });

  it("gives each session to one server when two servers' batches claim the same sessions at once", async () => {
    const other = await db.open();
    const { batches: otherBatches, statements: otherStatements } = recordCombiner(
      other,
      storeName,
      "intake",
      "bdsh_enqueue",
    );
    const ids = await sessions(6);
    reset();
    // Each server sends a message to every session, in opposite orders: their leases are taken in the same
    // (session id) order all the same, so neither waits on the other's lock while holding one it needs.
    const [mine, theirs] = await Promise.all([
      Promise.all(
        ids.map((id) => store.enqueueAndClaim(id, message("from a"), { owner: "server-a", ttlMs: TTL })),
      ),
      Promise.all(
        [...ids]
          .reverse()
          .map((id) => other.enqueueAndClaim(id, message("from b"), { owner: "server-b", ttlMs: TTL })),
      ),
    ]);
    expect(batches).toEqual([6]);
    expect(otherBatches).toEqual([6]);
    if (storeName === "PostgreSQL") {
      // Neither batch was undone (a deadlock would have sent each message again, alone).
      expect(statements).toEqual(["bdsh_enqueue_and_claim_batch"]);
      expect(otherStatements).toEqual(["bdsh_enqueue_and_claim_batch"]);
    }
    theirs.reverse();
    for (const [i, id] of ids.entries()) {
      const owner = (await store.getLease(sessionLeaseName(id)))?.owner;
      // Exactly one of the two claimed it, and that one holds its lease.
      expect([mine[i]!.claimed !== undefined, theirs[i]!.claimed !== undefined]).toEqual([
        owner === "server-a",
        owner === "server-b",
      ]);
      expect((await store.pendingInbox(id)).map((p) => p.text).sort()).toEqual(["from a", "from b"]);
    }
  });
});
