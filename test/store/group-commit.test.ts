/**
 * Group commit, on both stores: appends of many sessions made at once go out together (statement-combiner.ts;
 * on PostgreSQL one statement, `appendBatchStatement`; on SQLite one transaction with a savepoint per
 * append), and each is stored, refused or failed exactly as it would be alone. The batch path is entered by
 * making the appends in one tick; the batches the store's combiner sends are recorded to show that it was.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewEvent } from "../../src/log/events.js";
import {
  AppendConflictError,
  InboxClaimError,
  LeaseLostError,
  SessionNotFoundError,
  type Store,
  type StoreNotification,
  sessionLeaseName,
} from "../../src/store/store.js";
import { waitUntil } from "../support/wait.js";
import { bothStores, type FreshDatabase } from "./harness.js";
import { recordCombiner } from "./recorders.js";

const OWNER = "server-a";
const TTL = 60_000;

describe.each(bothStores())("group commit on %s", (storeName, harness) => {
  let db: FreshDatabase;
  let store: Store;
  /** The size of every batch the store's append combiner sent, in order (SQLite: of its writes). */
  let batches: number[];
  /** PostgreSQL: the names of the append statements its pool ran, in order. */
  let appendStatements: string[];

  beforeEach(async () => {
    db = await harness.fresh();
    store = await db.open();
    ({ batches, statements: appendStatements } = recordCombiner(store, storeName, "appends", "bdsh_append"));
  });

  afterEach(async () => {
    await db.dispose();
  });

  /** The appends went out in one batch (on PostgreSQL, as the one statement `name`). */
  const sentTogether = (n: number, name: string) => {
    expect(batches).toEqual([n]);
    if (storeName === "PostgreSQL") expect(appendStatements).toEqual([name]);
  };
  const reset = () => {
    batches.length = 0; // in place: the recorders hold these arrays
    appendStatements.length = 0;
  };

  const status = (value: "running" | "idle"): NewEvent => ({ type: "agent/status", data: { status: value } });
  const turnStart: NewEvent = { type: "turn/start", data: { trigger: "followup" }, turn: 1 };
  const turnEnd: NewEvent = { type: "turn/end", data: { reason: "completed" }, turn: 1 };
  const title = (text: string): NewEvent => ({ type: "session/title", data: { title: text } });

  async function sessions(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await store.createSession({ title: `s${i}` })).id);
    return ids;
  }

  it("stores many sessions' appends made at once, each as alone, in fewer statements", async () => {
    const ids = await sessions(12);
    for (const id of ids.slice(0, 6)) await store.acquireLease(sessionLeaseName(id), OWNER, TTL);
    reset();
    await Promise.all(
      ids.map((id, i) =>
        store.append(id, i % 3 === 0 ? [status("running"), turnStart] : [status("running")], 0, {
          ...(i < 6 ? { leaseOwner: OWNER } : {}),
          durability: "commit",
        }),
      ),
    );
    sentTogether(12, "bdsh_append_batch_commit");
    const opened = await db.exec("SELECT id, turn_open, status FROM sessions");
    for (const row of opened) {
      const i = ids.indexOf(row.id as string);
      expect([Boolean(row.turn_open), row.status]).toEqual(i % 3 === 0 ? [true, "running"] : [false, "idle"]);
    }

    // The next appends: turn ends, a title, and for the leased half the lease let go with it.
    reset();
    const seqs = await Promise.all(
      ids.map(async (id, i) => {
        const after = i % 3 === 0 ? 2 : 1;
        const events = i % 3 === 0 ? [turnEnd, status("idle")] : [title(`named ${i}`)];
        const stored = await store.append(id, events, after, {
          ...(i < 6 ? { leaseOwner: OWNER, releaseLease: true } : {}),
        });
        return stored.map((e) => e.seq);
      }),
    );
    sentTogether(12, "bdsh_append_batch"); // a disk-durable batch: one WAL flush (fsync) for all
    expect(seqs).toEqual(ids.map((_, i) => (i % 3 === 0 ? [3, 4] : [2])));

    for (const [i, id] of ids.entries()) {
      const events = await store.read(id);
      expect(events.map((e) => [e.seq, e.type])).toEqual(
        i % 3 === 0
          ? [
              [1, "agent/status"],
              [2, "turn/start"],
              [3, "turn/end"],
              [4, "agent/status"],
            ]
          : [
              [1, "agent/status"],
              [2, "session/title"],
            ],
      );
      const row = await store.getSession(id);
      expect(row?.lastSeq).toBe(i % 3 === 0 ? 4 : 2);
      expect(row?.title).toBe(i % 3 === 0 ? `s${i}` : `named ${i}`);
      if (i < 6) expect((await store.getLease(sessionLeaseName(id)))?.owner ?? null).toBeNull();
    }
    const closed = await db.exec("SELECT turn_open, status FROM sessions");
    for (const row of closed) expect([Boolean(row.turn_open), row.status]).toEqual([false, "idle"]);
  });

  it("fails only the append whose own check fails, with the error it would get alone (L1: a fenced-out writer's too)", async () => {
    const ids = await sessions(6);
    const [ok1, conflict, lost, ok2, claimGone, ok3] = ids as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    for (const id of ids) await store.acquireLease(sessionLeaseName(id), OWNER, TTL);
    await store.append(conflict, [status("running")], 0, { leaseOwner: OWNER });
    await store.releaseLease(sessionLeaseName(lost), OWNER);
    await store.acquireLease(sessionLeaseName(lost), "server-b", TTL);
    const item = await store.enqueueInbox(claimGone, {
      queue: "next-turn",
      mode: "followup",
      source: "human",
      text: "hi",
    });
    await store.discardInbox(claimGone, [item.id]);
    reset();

    const results = await Promise.allSettled([
      store.append(ok1, [status("running")], 0, { leaseOwner: OWNER }),
      store.append(conflict, [status("running")], 0, { leaseOwner: OWNER }),
      store.append(lost, [status("running")], 0, { leaseOwner: OWNER }),
      store.append(ok2, [status("running")], 0, { leaseOwner: OWNER }),
      store.append(claimGone, [status("running")], 0, { leaseOwner: OWNER, claimInbox: [item.id] }),
      store.append(ok3, [status("running")], 0, { leaseOwner: OWNER }),
      store.append("no-such-session", [status("running")], 0),
    ]);
    expect(batches[0]).toBe(7);
    if (storeName === "PostgreSQL") expect(appendStatements[0]).toBe("bdsh_append_batch");
    const [r1, rConflict, rLost, r2, rClaim, r3, rMissing] = results;
    for (const r of [r1, r2, r3]) expect(r.status).toBe("fulfilled");
    const reason = (r: PromiseSettledResult<unknown>) => (r.status === "rejected" ? r.reason : undefined);
    expect(reason(rConflict)).toBeInstanceOf(AppendConflictError);
    expect((reason(rConflict) as AppendConflictError).actualSeq).toBe(1);
    expect(reason(rLost)).toBeInstanceOf(LeaseLostError);
    expect(reason(rClaim)).toBeInstanceOf(InboxClaimError);
    expect((reason(rClaim) as InboxClaimError).ids).toEqual([item.id]);
    expect(reason(rMissing)).toBeInstanceOf(SessionNotFoundError);

    for (const id of [ok1, ok2, ok3]) expect((await store.read(id)).map((e) => e.seq)).toEqual([1]);
    expect(await store.read(lost)).toEqual([]);
    expect(await store.read(claimGone)).toEqual([]);
    expect((await store.read(conflict)).map((e) => e.seq)).toEqual([1]);
  });

  it("stores whatever a model wrote byte for byte beside other sessions' appends, and fails none of them", async () => {
    const ids = await sessions(4);
    const hostile = [
      "'); DELETE FROM events; --",
      'a "quoted" {brace} \\ backslash, NULL',
      "a NUL \u0000 inside, and 😀 beyond the BMP",
      "x".repeat(200_000),
    ];
    reset();
    await Promise.all(
      ids.map((id, i) =>
        store.append(
          id,
          [{ type: "user/message", data: { text: hostile[i]!, source: "human" }, turn: 1 }],
          0,
        ),
      ),
    );
    expect(batches[0]).toBe(4);
    for (const [i, id] of ids.entries()) {
      const [event] = await store.read(id);
      expect(event?.type === "user/message" && event.data.text).toBe(hostile[i]);
    }
  });

  it("consumes each append's inbox claims with it", async () => {
    const ids = await sessions(5);
    const items = await Promise.all(
      ids.map((id) =>
        store.enqueueInbox(id, { queue: "next-turn", mode: "followup", source: "human", text: `for ${id}` }),
      ),
    );
    reset();
    await Promise.all(
      ids.map((id, i) =>
        store.append(id, [status("running"), turnStart], 0, {
          claimInbox: [items[i]!.id],
          durability: "commit",
        }),
      ),
    );
    sentTogether(5, "bdsh_append_batch_commit");
    for (const id of ids) expect(await store.pendingInbox(id)).toEqual([]);
    const claimed = await db.exec("SELECT session_id, claimed_seq FROM inbox ORDER BY session_id");
    expect(claimed.map((r) => r.claimed_seq)).toEqual(ids.map(() => 1));
  });

  it.runIf(storeName === "PostgreSQL")(
    "undoes a batch whose claim a concurrent writer took after the check, and answers each append alone",
    async () => {
      const ids = await sessions(3);
      const items = await Promise.all(
        ids.map((id) =>
          store.enqueueInbox(id, { queue: "next-turn", mode: "followup", source: "human", text: "go" }),
        ),
      );
      // The row passes the batch's check (it is pending) but its claim's update finds nothing to change, as
      // when a discard commits between the two: this trigger skips the update of that one row.
      const taken = items[1]!.id;
      await db.exec(`
        CREATE FUNCTION skip_claim() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF OLD.id = '${taken}' THEN RETURN NULL; END IF; RETURN NEW; END $$;
        CREATE TRIGGER skip_claim BEFORE UPDATE ON inbox FOR EACH ROW EXECUTE FUNCTION skip_claim();`);
      reset();
      const results = await Promise.allSettled(
        ids.map((id, i) =>
          store.append(id, [status("running"), turnStart], 0, { claimInbox: [items[i]!.id] }),
        ),
      );
      // The batch raised and was undone; each append then ran alone.
      expect(appendStatements).toEqual(["bdsh_append_batch", ...ids.map(() => "bdsh_append_claiming")]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(InboxClaimError);
      expect((await store.read(ids[1]!)).length).toBe(0);
      for (const id of [ids[0]!, ids[2]!]) {
        expect((await store.read(id)).map((e) => e.seq)).toEqual([1, 2]);
        expect(await store.pendingInbox(id)).toEqual([]);
      }
    },
  );

  it.runIf(storeName === "PostgreSQL")(
    "lets a value the database refuses fail its own append only",
    async () => {
      const ids = await sessions(4);
      reset();
      const outOfRange: NewEvent = { type: "turn/start", data: { trigger: "followup" }, turn: 2 ** 40 };
      const results = await Promise.allSettled(
        ids.map((id, i) => store.append(id, i === 2 ? [outOfRange] : [status("running")], 0)),
      );
      expect(appendStatements[0]).toBe("bdsh_append_batch");
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
      expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/out of range/);
      for (const [i, id] of ids.entries()) expect((await store.read(id)).length).toBe(i === 2 ? 0 : 1);
    },
  );

  it("announces each stored session's new last seq", async () => {
    const ids = await sessions(4);
    const heard: Array<{ sessionId: string; seq: number }> = [];
    let listening = false;
    store.subscribe(
      (n: StoreNotification) => {
        if (n.channel === "resync") listening = true;
        if (n.channel === "events") heard.push({ sessionId: n.sessionId, seq: n.seq });
      },
      { events: true },
    );
    await waitUntil(() => listening, "the other store listening");
    reset();
    await Promise.all(ids.map((id) => store.append(id, [status("running"), turnStart], 0)));
    sentTogether(4, "bdsh_append_batch");
    await waitUntil(() => heard.length === ids.length, "a notification per session");
    expect(heard.sort((a, b) => a.sessionId.localeCompare(b.sessionId))).toEqual(
      [...ids].sort().map((sessionId) => ({ sessionId, seq: 2 })),
    );
  });
});
