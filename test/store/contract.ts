/**
 * The store contract (issue 2 item 3): every behaviour the rest of the system relies on, run unchanged
 * against each implementation. A store passes or it is not a store.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LogEvent, type NewEvent, newEvent } from "../../src/log/events.js";
import { AmbiguousSessionIdError } from "../../src/store/session-ids.js";
import {
  AppendConflictError,
  InboxClaimError,
  LeaseLostError,
  type NewInboxItem,
  SessionArchivedError,
  SessionNotFoundError,
  type SessionRow,
  type Store,
  type StoreNotification,
  sessionLeaseName,
} from "../../src/store/store.js";
import { waitUntil } from "../support/wait.js";
import type { FreshDatabase, StoreHarness } from "./harness.js";
import { planningContract } from "./planning-contract.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
/** Tool-call arguments exactly as a model might emit them: odd spacing, `1.0`, `2e3`. */
const ODD_ARGUMENTS = '{"a": 1,  "b":[1.0, 2e3]}';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function step(n: number): NewEvent[] {
  return [
    newEvent("step/start", {}, { turn: 1, step: n }),
    newEvent("step/end", { result: "continue" }, { turn: 1, step: n }),
  ];
}

function followup(text: string): NewInboxItem {
  return { queue: "next-turn", mode: "followup", source: "human", text };
}

/** Resolves with the first notification that matches, from the moment of the call. */
function nextNotification(
  store: Store,
  matches: (n: StoreNotification) => boolean,
): { received: Promise<StoreNotification>; stop: () => void } {
  let stop = () => {};
  const received = new Promise<StoreNotification>((resolve) => {
    stop = store.subscribe(
      (n) => {
        if (matches(n)) {
          stop();
          resolve(n);
        }
      },
      { events: true },
    );
  });
  return { received, stop };
}

/** Subscribes (to events too, unless told) and waits until the subscription is live (its first `resync`). */
async function liveSubscription(
  store: Store,
  options = { events: true },
): Promise<{ seen: StoreNotification[]; stop: () => void }> {
  const seen: StoreNotification[] = [];
  let ready!: () => void;
  const live = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const stop = store.subscribe((n) => {
    seen.push(n);
    if (n.channel === "resync") ready();
  }, options);
  await live;
  return { seen, stop };
}

export function storeContract(harness: StoreHarness): void {
  let db: FreshDatabase;
  let store: Store;

  beforeEach(async () => {
    db = await harness.fresh();
    store = await db.open();
  });
  afterEach(async () => {
    await db.dispose();
  });

  planningContract(() => store);

  describe("migrations", () => {
    it("apply each migration exactly once, however often migrate runs", async () => {
      await store.migrate();
      const other = await db.open();
      await other.migrate();
      const rows = await db.exec("SELECT version FROM schema_migrations ORDER BY version");
      const versions = rows.map((r) => Number(r.version));
      expect(versions.length).toBeGreaterThan(0);
      expect(new Set(versions).size).toBe(versions.length);
    });
  });

  describe("harness keys (issue 17)", () => {
    it("makes a key once and gives every process of the store the same one", async () => {
      const key = await store.harnessKey("subagent-handles");
      expect(Buffer.from(key, "base64")).toHaveLength(32);
      const other = await db.open();
      const [a, b] = await Promise.all([
        other.harnessKey("subagent-handles"),
        store.harnessKey("subagent-handles"),
      ]);
      expect(a).toBe(key);
      expect(b).toBe(key);
      expect(await store.harnessKey("another")).not.toBe(key);
    });
  });

  describe("sessions", () => {
    it("are created with a UUIDv7 id and the defaults", async () => {
      const s = await store.createSession();
      expect(s).toMatchObject({ parentId: null, kind: "main", title: null, status: "idle", archived: false });
      expect(s.id).toMatch(UUID_V7);
      expect(s.lastSeq).toBe(0);
      expect(s.metadata).toEqual({});
      expect(s.createdAt).toMatch(ISO_UTC);
      expect(s.updatedAt).toMatch(ISO_UTC);
    });

    it("keep what they were created with", async () => {
      const parent = await store.createSession();
      const s = await store.createSession({
        id: "child-1",
        parentId: parent.id,
        kind: "subagent",
        title: "Dig",
        status: "running",
        metadata: { z: 1, a: { y: 2, b: [3] } },
      });
      expect(await store.getSession("child-1")).toEqual(s);
      expect(s).toMatchObject({ id: "child-1", parentId: parent.id, kind: "subagent", title: "Dig" });
      expect(JSON.stringify(s.metadata)).toBe('{"z":1,"a":{"y":2,"b":[3]}}');
    });

    it("refuse a duplicate id", async () => {
      await store.createSession({ id: "same" });
      await expect(store.createSession({ id: "same" })).rejects.toMatchObject({ code: "SESSION_EXISTS" });
    });

    it("are undefined when unknown", async () => {
      expect(await store.getSession("nope")).toBeUndefined();
    });

    it("are patched field by field, and a null title clears it", async () => {
      const s = await store.createSession({ title: "t", metadata: { a: 1 } });
      const archived = await store.updateSession(s.id, { archived: true, status: "done" });
      expect(archived).toMatchObject({ title: "t", archived: true, status: "done", metadata: { a: 1 } });
      const cleared = await store.updateSession(s.id, { title: null, metadata: { b: 2 } });
      expect(cleared).toMatchObject({ title: null, archived: true, status: "done", metadata: { b: 2 } });
      expect(await store.getSession(s.id)).toEqual(cleared);
    });

    it("cannot be patched when unknown", async () => {
      await expect(store.updateSession("nope", { status: "x" })).rejects.toBeInstanceOf(SessionNotFoundError);
    });

    it("list newest first, page with `before`, and hide archived ones unless asked", async () => {
      const made: SessionRow[] = [];
      for (let i = 0; i < 5; i++) made.push(await store.createSession({ title: `s${i}` }));
      await store.updateSession(made[2]!.id, { archived: true });
      const newestFirst = [...made].reverse().map((s) => s.id);

      const all = await store.listSessions({ includeArchived: true });
      expect(all.map((s) => s.id)).toEqual(newestFirst);
      const visible = await store.listSessions();
      expect(visible.map((s) => s.id)).toEqual(newestFirst.filter((id) => id !== made[2]!.id));

      const page1 = await store.listSessions({ limit: 2, includeArchived: true });
      const page2 = await store.listSessions({ limit: 2, includeArchived: true, before: page1.at(-1)!.id });
      const page3 = await store.listSessions({ limit: 2, includeArchived: true, before: page2.at(-1)!.id });
      expect([...page1, ...page2, ...page3].map((s) => s.id)).toEqual(newestFirst);
    });

    it("list only one workspace's sessions when asked", async () => {
      const a = await store.createSession({ metadata: { workspace: "/work/a" } });
      await store.createSession({ metadata: { workspace: "/work/b" } });
      await store.createSession();
      const a2 = await store.createSession({ metadata: { workspace: "/work/a", other: 1 } });
      expect((await store.listSessions({ workspace: "/work/a" })).map((s) => s.id)).toEqual([a2.id, a.id]);
      expect(await store.listSessions({ workspace: "/work" })).toEqual([]);
    });

    it("list the children of a parent", async () => {
      const parent = await store.createSession();
      const child = await store.createSession({ parentId: parent.id, kind: "subagent" });
      await store.createSession();
      expect((await store.listSessions({ parentId: parent.id })).map((s) => s.id)).toEqual([child.id]);
    });
  });

  describe("session id prefixes (issue 15)", () => {
    it("resolve a unique prefix, and an exact id even when it prefixes a longer one", async () => {
      for (const id of ["abc-1", "abc-10", "abd-2", "zz"]) await store.createSession({ id });
      expect(await store.resolveSessionId("abd")).toBe("abd-2");
      expect(await store.resolveSessionId("abc-10")).toBe("abc-10");
      expect(await store.resolveSessionId("abc-1")).toBe("abc-1");
      expect(await store.resolveSessionId("z")).toBe("zz");
    });

    it("are an error naming up to 5 candidates when ambiguous", async () => {
      for (let i = 0; i < 7; i++) await store.createSession({ id: `dup-${i}` });
      await store.createSession({ id: "dup" + "\u00e9" });
      const error = await store.resolveSessionId("dup-").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AmbiguousSessionIdError);
      expect(error).toMatchObject({
        code: "SESSION_AMBIGUOUS",
        candidates: ["dup-0", "dup-1", "dup-2", "dup-3", "dup-4"],
        more: true,
      });
      expect((error as Error).message).toBe(
        "session id prefix dup- is ambiguous: dup-0, dup-1, dup-2, dup-3, dup-4, …",
      );
      const two = await store.resolveSessionId("du").catch((e: unknown) => e);
      expect(two).toMatchObject({ code: "SESSION_AMBIGUOUS" });
    });

    it("are not found when nothing starts with them, and refused when empty", async () => {
      await store.createSession({ id: "abc" });
      await expect(store.resolveSessionId("abd")).rejects.toBeInstanceOf(SessionNotFoundError);
      await expect(store.resolveSessionId("abcd")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
      await expect(store.resolveSessionId("")).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });

    it("resolve generated UUIDv7 ids by their shortest unique prefix", async () => {
      const made: SessionRow[] = [];
      for (let i = 0; i < 4; i++) made.push(await store.createSession());
      const prefixes = await store.uniqueIdPrefixes(made.map((s) => s.id));
      for (const s of made) {
        const prefix = prefixes.get(s.id)!;
        expect(prefix.length).toBeGreaterThanOrEqual(8);
        expect(s.id.startsWith(prefix)).toBe(true);
        expect(await store.resolveSessionId(prefix)).toBe(s.id);
        // One character less is ambiguous, unless it is already the minimum length.
        if (prefix.length > 8)
          await expect(store.resolveSessionId(prefix.slice(0, -1))).rejects.toMatchObject({
            code: "SESSION_AMBIGUOUS",
          });
      }
    });

    it("give the shortest unique prefix against both neighbours", async () => {
      for (const id of ["aaaa-0001", "aaaa-0002", "aaab-0000", "b"]) await store.createSession({ id });
      const prefixes = await store.uniqueIdPrefixes(["aaaa-0001", "aaab-0000", "b"], 4);
      expect(Object.fromEntries(prefixes)).toEqual({
        "aaaa-0001": "aaaa-0001",
        "aaab-0000": "aaab",
        b: "b",
      });
    });
  });

  describe("the latest session of a workspace (issue 15 --continue)", () => {
    it("is the most recently updated main or fork session there, archived ones only when asked", async () => {
      const ws = { workspace: "/work/a" };
      expect(await store.latestSession(ws)).toBeUndefined();
      const older = await store.createSession({ metadata: ws });
      const newer = await store.createSession({ metadata: ws });
      await store.createSession({ metadata: { workspace: "/work/b" } });
      await store.createSession({ kind: "subagent", parentId: newer.id, metadata: ws });
      expect((await store.latestSession(ws))?.id).toBe(newer.id);
      await sleep(5);
      await store.append(older.id, step(1), 0);
      expect((await store.latestSession(ws))?.id).toBe(older.id);
      await sleep(5);
      const fork = await store.createSession({ kind: "fork", parentId: older.id, metadata: ws });
      expect((await store.latestSession(ws))?.id).toBe(fork.id);
      await store.updateSession(fork.id, { archived: true });
      expect((await store.latestSession(ws))?.id).toBe(older.id);
      expect((await store.latestSession({ ...ws, includeArchived: true }))?.id).toBe(fork.id);
    });
  });

  describe("append", () => {
    it("assigns dense seqs after the expected one and advances the session", async () => {
      const s = await store.createSession();
      const first = await store.append(s.id, step(1), 0);
      const second = await store.append(s.id, step(2), 2);
      expect([...first, ...second].map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect((await store.getSession(s.id))!.lastSeq).toBe(4);
      expect(await store.read(s.id)).toEqual([...first, ...second]);
    });

    it("marks the session running while a turn is open, idle again after its end (the listings' status)", async () => {
      const s = await store.createSession();
      expect(s.status).toBe("idle");
      await store.append(s.id, [{ type: "turn/start", data: {}, turn: 1 }], 0);
      expect((await store.getSession(s.id))!.status).toBe("running");
      await store.append(s.id, [{ type: "user/message", data: { text: "hi", source: "human" }, turn: 1 }], 1);
      expect((await store.listSessions()).find((row) => row.id === s.id)!.status).toBe("running");
      await store.append(s.id, [{ type: "turn/end", data: { reason: "completed" }, turn: 1 }], 2);
      expect((await store.getSession(s.id))!.status).toBe("idle");
    });

    it("keeps a given time, stamps ISO-8601 UTC otherwise, and keeps turn and step", async () => {
      const s = await store.createSession();
      const [given, stamped] = await store.append(
        s.id,
        [
          { ...newEvent("turn/start", {}, { turn: 3 }), at: "2024-01-02T03:04:05.678Z" },
          newEvent("agent/status", { status: "idle" }),
        ],
        0,
      );
      expect(given).toMatchObject({ at: "2024-01-02T03:04:05.678Z", turn: 3 });
      expect(given).not.toHaveProperty("step");
      expect(stamped!.at).toMatch(ISO_UTC);
      expect(stamped).not.toHaveProperty("turn");
      expect(await store.read(s.id)).toEqual([given, stamped]);
    });

    it("round-trips data byte for byte: exact tool arguments, unicode, nested key order", async () => {
      const s = await store.createSession();
      const events: NewEvent[] = [
        newEvent("assistant/message", {
          blocks: [
            { type: "text", text: 'héllo 👋 \u0000 \u2028 "quoted" \\ \n\t 日本語' },
            { type: "tool-call", id: "call_1", name: "edit", arguments: ODD_ARGUMENTS },
          ],
          provider: "deepseek",
          model: "deepseek-chat",
          finish: "tool-calls",
        }),
        newEvent("tool/call", { callId: "call_1", name: "edit", arguments: ODD_ARGUMENTS }),
        newEvent("question/asked", {
          id: "q",
          callId: "call_1",
          questions: [{ zeta: 1, alpha: { z: [1.5, -0, 1e21], a: null }, middle: "" }],
        }),
      ];
      await store.append(s.id, events, 0);
      const read = await (await db.open()).read(s.id);
      expect(read.map((e) => JSON.stringify(e.data))).toEqual(events.map((e) => JSON.stringify(e.data)));
      const call = read[1] as LogEvent<"tool/call">;
      expect(call.data.arguments).toBe(ODD_ARGUMENTS);
    });

    it("refuses a stale expected seq with the actual one, and writes nothing", async () => {
      const s = await store.createSession();
      await store.append(s.id, step(1), 0);
      const error = await store.append(s.id, step(2), 1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppendConflictError);
      expect(error).toMatchObject({ code: "APPEND_CONFLICT", expectedSeq: 1, actualSeq: 2 });
      await expect(store.append(s.id, step(2), 7)).rejects.toMatchObject({ actualSeq: 2 });
      expect((await store.read(s.id)).length).toBe(2);
      expect((await store.getSession(s.id))!.lastSeq).toBe(2);
    });

    it("writes no event of a batch when a later event of it is refused", async () => {
      const s = await store.createSession();
      // A stray row at seq 2 (a state the API cannot produce) makes the batch's second insert fail.
      await db.exec(
        `INSERT INTO events (session_id, seq, type, at, data) VALUES ('${s.id}', 2, 'agent/status', '2024-01-01T00:00:00.000Z', '{}')`,
      );
      await expect(store.append(s.id, step(1), 0)).rejects.toThrow();
      expect((await store.read(s.id)).map((e) => e.seq)).toEqual([2]);
      expect((await store.getSession(s.id))!.lastSeq).toBe(0);
    });

    it("of two concurrent appends at the same expected seq exactly one wins", async () => {
      const s = await store.createSession();
      const other = await db.open();
      for (let round = 0; round < 10; round++) {
        const expected = round * 2;
        const results = await Promise.allSettled([
          store.append(s.id, step(round), expected),
          other.append(s.id, step(round), expected),
          store.append(s.id, step(round), expected),
        ]);
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        for (const r of results) {
          if (r.status === "rejected") expect(r.reason).toBeInstanceOf(AppendConflictError);
        }
      }
      expect((await store.read(s.id)).map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });

    it("refuses an unknown session", async () => {
      await expect(store.append("nope", step(1), 0)).rejects.toBeInstanceOf(SessionNotFoundError);
    });

    it("refuses an empty batch and a negative expected seq", async () => {
      const s = await store.createSession();
      await expect(store.append(s.id, [], 0)).rejects.toMatchObject({ code: "INVALID_INPUT" });
      await expect(store.append(s.id, step(1), -1)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });
  });

  describe("append and the session row", () => {
    it("sets the row's title from the last session/title it stores, and leaves it otherwise", async () => {
      const s = await store.createSession({ title: "given" });
      await store.append(s.id, step(1), 0);
      expect((await store.getSession(s.id))?.title).toBe("given");
      await store.append(
        s.id,
        [
          newEvent("session/title", { title: "first" }),
          newEvent("session/title", { title: "Fix the flaky test" }),
        ],
        2,
      );
      expect((await store.getSession(s.id))?.title).toBe("Fix the flaky test");
      await store.append(s.id, step(2), 4, { durability: "commit" });
      expect((await store.getSession(s.id))?.title).toBe("Fix the flaky test");
    });
  });

  describe("append fenced by leaseOwner", () => {
    it("writes while the owner holds the session's live lease", async () => {
      const s = await store.createSession();
      await store.acquireLease(sessionLeaseName(s.id), "server-a", 60_000);
      expect(await store.append(s.id, step(1), 0, { leaseOwner: "server-a" })).toHaveLength(2);
    });

    it("refuses when nobody, or somebody else, holds the lease, and writes nothing", async () => {
      const s = await store.createSession();
      await expect(store.append(s.id, step(1), 0, { leaseOwner: "server-a" })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      await store.acquireLease(sessionLeaseName(s.id), "server-b", 60_000);
      await expect(store.append(s.id, step(1), 0, { leaseOwner: "server-a" })).rejects.toMatchObject({
        code: "LEASE_LOST",
        owner: "server-a",
      });
      expect(await store.read(s.id)).toEqual([]);
    });

    it("refuses a holder whose lease lapsed", async () => {
      const s = await store.createSession();
      await store.acquireLease(sessionLeaseName(s.id), "server-a", 50);
      await sleep(120);
      await expect(store.append(s.id, step(1), 0, { leaseOwner: "server-a" })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
    });

    it("lets go of the lease in the same append when asked, and only when the append is written", async () => {
      const s = await store.createSession();
      const name = sessionLeaseName(s.id);
      await store.acquireLease(name, "server-a", 60_000);
      // A refused append (wrong seq) releases nothing.
      await expect(
        store.append(s.id, step(1), 3, { leaseOwner: "server-a", releaseLease: true }),
      ).rejects.toBeInstanceOf(AppendConflictError);
      expect((await store.getLease(name))?.owner).toBe("server-a");
      // So does one refused for an inbox claim that no longer holds (nothing of it is kept).
      await expect(
        store.append(s.id, step(1), 0, {
          leaseOwner: "server-a",
          releaseLease: true,
          claimInbox: ["no-such-row"],
          durability: "commit",
        }),
      ).rejects.toBeInstanceOf(InboxClaimError);
      expect((await store.getLease(name))?.owner).toBe("server-a");
      await store.append(s.id, step(1), 0, { leaseOwner: "server-a", releaseLease: true });
      expect(await store.read(s.id)).toHaveLength(2);
      expect(await store.getLease(name)).toBeUndefined();
      // Released, it passes to the next owner at once, with a newer fence.
      expect(await store.acquireLease(name, "server-b", 60_000)).toMatchObject({ owner: "server-b" });
      // And a holder who was not asked keeps it.
      await store.append(s.id, step(3), 2, { leaseOwner: "server-b", durability: "commit" });
      expect((await store.getLease(name))?.owner).toBe("server-b");
    });

    it("still reports a seq conflict to the live holder", async () => {
      const s = await store.createSession();
      await store.acquireLease(sessionLeaseName(s.id), "server-a", 60_000);
      await expect(store.append(s.id, step(1), 5, { leaseOwner: "server-a" })).rejects.toBeInstanceOf(
        AppendConflictError,
      );
    });
  });

  describe("append claiming inbox items", () => {
    it("consumes the claimed items with the events", async () => {
      const s = await store.createSession();
      const a = await store.enqueueInbox(s.id, followup("a"));
      const b = await store.enqueueInbox(s.id, followup("b"));
      await store.append(s.id, step(1), 0, { claimInbox: [a.id] });
      expect((await store.pendingInbox(s.id)).map((i) => i.id)).toEqual([b.id]);
      expect(await store.read(s.id)).toHaveLength(2);
    });

    it("is all or nothing: an item no longer pending fails the append and claims nothing", async () => {
      const s = await store.createSession();
      const a = await store.enqueueInbox(s.id, followup("a"));
      const b = await store.enqueueInbox(s.id, followup("b"));
      await store.discardInbox(s.id, [b.id]);
      const error = await store
        .append(s.id, step(1), 0, { claimInbox: [a.id, b.id] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InboxClaimError);
      expect(error).toMatchObject({ code: "INBOX_CLAIMED", ids: [b.id] });
      expect(await store.read(s.id)).toEqual([]);
      expect((await store.getSession(s.id))!.lastSeq).toBe(0);
      expect((await store.pendingInbox(s.id)).map((i) => i.id)).toEqual([a.id]);
    });

    it("cannot claim another session's item", async () => {
      const s = await store.createSession();
      const t = await store.createSession();
      const item = await store.enqueueInbox(t.id, followup("theirs"));
      await expect(store.append(s.id, step(1), 0, { claimInbox: [item.id] })).rejects.toBeInstanceOf(
        InboxClaimError,
      );
      expect(await store.pendingInbox(t.id)).toHaveLength(1);
    });

    it("lets only one of two racing claimers take an item", async () => {
      const s = await store.createSession();
      const item = await store.enqueueInbox(s.id, followup("once"));
      const other = await db.open();
      const results = await Promise.allSettled([
        store.append(s.id, step(1), 0, { claimInbox: [item.id] }),
        other.append(s.id, step(1), 0, { claimInbox: [item.id] }),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(await store.read(s.id)).toHaveLength(2);
      expect(await store.pendingInbox(s.id)).toEqual([]);
    });
  });

  describe("read", () => {
    it("selects a range by after, upTo, limit and types", async () => {
      const s = await store.createSession();
      for (let i = 0; i < 5; i++) await store.append(s.id, step(i), i * 2);
      const seqs = (events: LogEvent[]) => events.map((e) => e.seq);
      expect(seqs(await store.read(s.id, { after: 3 }))).toEqual([4, 5, 6, 7, 8, 9, 10]);
      expect(seqs(await store.read(s.id, { after: 3, upTo: 6 }))).toEqual([4, 5, 6]);
      expect(seqs(await store.read(s.id, { after: 3, limit: 2 }))).toEqual([4, 5]);
      expect(seqs(await store.read(s.id, { types: ["step/end"] }))).toEqual([2, 4, 6, 8, 10]);
      expect(seqs(await store.read(s.id, { types: ["step/end"], after: 4, limit: 2 }))).toEqual([6, 8]);
      expect(await store.read(s.id, { types: [] })).toEqual([]);
    });

    it("of an unknown session is empty", async () => {
      expect(await store.read("nope")).toEqual([]);
    });
  });

  describe("inbox", () => {
    it("keeps pending items in arrival order with their fields", async () => {
      const s = await store.createSession();
      const a = await store.enqueueInbox(s.id, followup("first"));
      const b = await store.enqueueInbox(s.id, {
        queue: "next-step",
        mode: "steer",
        source: "agent-message",
        text: "second",
        metadata: { from: "child" },
      });
      expect(a.id).toMatch(UUID_V7);
      expect(a.createdAt).toMatch(ISO_UTC);
      expect(b).toMatchObject({
        sessionId: s.id,
        queue: "next-step",
        mode: "steer",
        metadata: { from: "child" },
      });
      expect(await store.pendingInbox(s.id)).toEqual([a, b]);
    });

    it("discards pending items and counts only those it dropped", async () => {
      const s = await store.createSession();
      const a = await store.enqueueInbox(s.id, followup("a"));
      const b = await store.enqueueInbox(s.id, followup("b"));
      expect(await store.discardInbox(s.id, [a.id, "unknown"])).toBe(1);
      expect(await store.discardInbox(s.id, [a.id])).toBe(0);
      expect(await store.discardInbox(s.id, [])).toBe(0);
      expect((await store.pendingInbox(s.id)).map((i) => i.id)).toEqual([b.id]);
    });

    it("claims sessions with pending turn input and no live holder, oldest first, up to the limit", async () => {
      const [s1, s2, s3, s4, s5] = await Promise.all([1, 2, 3, 4, 5].map(() => store.createSession()));
      await store.enqueueInbox(s2!.id, followup("x"));
      await store.enqueueInbox(s1!.id, followup("y"));
      await store.enqueueInbox(s3!.id, { ...followup("z"), queue: "next-step", mode: "inject" });
      await store.enqueueInbox(s4!.id, { ...followup("w"), queue: "next-step", mode: "steer" });
      await store.enqueueInbox(s5!.id, followup("v"));
      await store.acquireLease(sessionLeaseName(s5!.id), "other", 60_000);
      expect(await store.claimPendingSessions("me", 60_000, 0)).toEqual([]);
      expect(await store.claimPendingSessions("me", 60_000, 2)).toEqual([s2!.id, s1!.id]);
      expect(await store.getLease(sessionLeaseName(s2!.id))).toMatchObject({ owner: "me" });
      // s3 has only an inject, s5 is held live by another owner, s1 and s2 are now mine.
      expect(await store.claimPendingSessions("me", 60_000, 10)).toEqual([s4!.id]);
      expect(await store.claimPendingSessions("third", 60_000, 10)).toEqual([]);
    });

    it("takes over a claimed session whose holder lapsed, with the next fence", async () => {
      const s = await store.createSession();
      await store.enqueueInbox(s.id, followup("x"));
      expect(await store.claimPendingSessions("a", 50, 5)).toEqual([s.id]);
      await sleep(120);
      expect(await store.claimPendingSessions("b", 60_000, 5)).toEqual([s.id]);
      expect(await store.getLease(sessionLeaseName(s.id))).toMatchObject({ owner: "b", fence: 2 });
    });

    it("never gives one session to two concurrent claimers", async () => {
      const sessions = await Promise.all(Array.from({ length: 40 }, () => store.createSession()));
      for (const s of sessions) await store.enqueueInbox(s.id, followup("go"));
      const others = await Promise.all([db.open(), db.open(), db.open()]);
      const claims = await Promise.all(
        [store, ...others].map((claimer, i) => claimer.claimPendingSessions(`owner${i}`, 60_000, 15)),
      );
      const all = claims.flat();
      expect(new Set(all).size).toBe(all.length);
      for (const [i, ids] of claims.entries())
        for (const id of ids) expect((await store.getLease(sessionLeaseName(id)))?.owner).toBe(`owner${i}`);
      const rest = await store.claimPendingSessions("late", 60_000, 100);
      expect(new Set([...all, ...rest]).size).toBe(sessions.length);
    });

    it("refuses an item for an unknown session", async () => {
      await expect(store.enqueueInbox("nope", followup("x"))).rejects.toBeInstanceOf(SessionNotFoundError);
    });

    // Issue 16 item 6: a cross-server cancel (L7) is a row of its own kind, not input.
    it("keeps a cancel request apart from input: never pending, claimed or claimable; taken once", async () => {
      const [s, idle] = await Promise.all([1, 2].map(() => store.createSession()));
      const input = await store.enqueueInbox(s!.id, followup("a"));
      const live = await liveSubscription(store); // LISTEN is up before the request is sent
      const announced = nextNotification(store, (n) => n.channel === "inbox" && n.sessionId === idle!.id);
      await store.requestCancel(idle!.id);
      expect(await announced.received).toEqual({
        channel: "inbox",
        sessionId: idle!.id,
        itemId: expect.any(String),
        cancel: true,
      });
      live.stop();
      await store.requestCancel(s!.id);
      await store.requestCancel(s!.id);
      expect(await store.pendingInbox(idle!.id)).toEqual([]);
      expect(await store.pendingInbox(s!.id)).toEqual([input]);
      // Neither a session with only a cancel request, nor one whose input was discarded, is claimable.
      expect(await store.claimPendingSessions("me", 60_000, 10)).toEqual([s!.id]);
      await store.releaseLease(sessionLeaseName(s!.id), "me");
      // The claim consumed s's two (no one was driving it); two more arrive.
      expect(await store.takeCancelRequests(s!.id)).toBe(0);
      await store.requestCancel(s!.id);
      await store.requestCancel(s!.id);
      const rows = await db.exec(
        `SELECT id FROM inbox WHERE session_id = '${s!.id}' AND mode = 'cancel' AND claimed_at IS NULL`,
      );
      const cancelIds = rows.map((r) => String(r.id));
      expect(cancelIds).toHaveLength(2);
      expect(await store.discardInbox(s!.id, [input.id, ...cancelIds])).toBe(1);
      expect(await store.claimPendingSessions("me", 60_000, 10)).toEqual([]);
      // Not claimable into the log: the model never sees it.
      await expect(store.append(s!.id, step(1), 0, { claimInbox: [cancelIds[0]!] })).rejects.toBeInstanceOf(
        InboxClaimError,
      );
      expect(await store.takeCancelRequests(s!.id)).toBe(2);
      expect(await store.takeCancelRequests(s!.id)).toBe(0);
      expect(await store.takeCancelRequests(idle!.id)).toBe(1);
      await expect(store.requestCancel("nope")).rejects.toBeInstanceOf(SessionNotFoundError);
    });

    it("refuses input to an archived session when asked, in the enqueue itself", async () => {
      const s = await store.createSession();
      await store.updateSession(s.id, { archived: true });
      await expect(store.enqueueInbox(s.id, followup("a"), { refuseArchived: true })).rejects.toBeInstanceOf(
        SessionArchivedError,
      );
      await expect(
        store.enqueueInbox("no-such-session", followup("a"), { refuseArchived: true }),
      ).rejects.toBeInstanceOf(SessionNotFoundError);
      expect(await store.pendingInbox(s.id)).toEqual([]);
      const kept = await store.enqueueInbox(s.id, followup("b")); // not asked: queued (a frozen session's own rows)
      expect(await store.pendingInbox(s.id)).toEqual([kept]);
      await store.updateSession(s.id, { archived: false });
      const taken = await store.enqueueInbox(s.id, followup("c"), { refuseArchived: true });
      expect(await store.pendingInbox(s.id)).toEqual([kept, taken]);
    });

    it("reads for a drive what read, pendingInbox and getSession return, at one moment", async () => {
      const s = await store.createSession({ title: "t", metadata: { workspace: "/w" } });
      await store.append(s.id, step(1), 0);
      await store.append(s.id, step(2), 2);
      const a = await store.enqueueInbox(s.id, followup("a"));
      const b = await store.enqueueInbox(s.id, { ...followup("b"), queue: "next-step", mode: "steer" });
      await store.requestCancel(s.id); // not input
      const after = await store.readForDrive(s.id, 2);
      expect(after.events).toEqual(await store.read(s.id, { after: 2 }));
      expect(after.events.map((e) => e.seq)).toEqual([3, 4]);
      expect(after.pending).toEqual([a, b]);
      expect(after.session).toEqual(await store.getSession(s.id));
      const all = await store.readForDrive(s.id, 0);
      expect(all.events).toEqual(await store.read(s.id));
      const nothingNew = await store.readForDrive(s.id, 4);
      expect(nothingNew.events).toEqual([]);
      const other = await store.createSession();
      expect(await store.readForDrive(other.id, 0)).toEqual({
        events: [],
        pending: [],
        session: await store.getSession(other.id),
      });
      expect(await store.readForDrive("no-such-session", 0)).toEqual({
        events: [],
        pending: [],
        session: undefined,
      });
    });

    it("queues a message and claims its session in one call: the lease, its cancels, the drive's read", async () => {
      const s = await store.createSession({ title: "t" });
      await store.append(s.id, step(1), 0);
      const earlier = await store.enqueueInbox(s.id, followup("earlier"));
      await store.requestCancel(s.id); // came too late for any drive: the claim consumes it
      const { seen, stop } = await liveSubscription(store);
      const heard = () => seen.flatMap((n) => (n.channel === "inbox" && n.itemId ? [n.itemId] : []));
      try {
        const { item, claimed } = await store.enqueueAndClaim(s.id, followup("now"), {
          owner: "server-a",
          ttlMs: 60_000,
          after: 1,
        });
        expect(item).toMatchObject({ sessionId: s.id, text: "now", queue: "next-turn", mode: "followup" });
        expect(await store.pendingInbox(s.id)).toEqual([earlier, item]);
        expect(claimed?.pending).toEqual([earlier, item]);
        expect(claimed?.events).toEqual(await store.read(s.id, { after: 1 }));
        expect(claimed?.session).toEqual(await store.getSession(s.id));
        expect((await store.getLease(sessionLeaseName(s.id)))?.owner).toBe("server-a");
        expect(await store.takeCancelRequests(s.id)).toBe(0);
        // Announced like any enqueue, and as claimed: the other servers make no claim pass for it.
        await waitUntil(() => heard().includes(item.id), "the new row's notification");
        const announced = (id: string) =>
          seen.find((n) => n.channel === "inbox" && n.itemId === id) as { claimed?: true } | undefined;
        expect(announced(item.id)?.claimed).toBe(true);
        // Held live by another owner: queued, not claimed, the lease untouched.
        const second = await store.enqueueAndClaim(s.id, followup("later"), {
          owner: "server-b",
          ttlMs: 60_000,
        });
        expect(second.claimed).toBeUndefined();
        await waitUntil(() => heard().includes(second.item.id), "the second row's notification");
        expect(announced(second.item.id)?.claimed).toBeUndefined(); // not taken: any claim pass may look
        expect((await store.getLease(sessionLeaseName(s.id)))?.owner).toBe("server-a");
        expect(await store.pendingInbox(s.id)).toEqual([earlier, item, second.item]);
        // Released, the next message claims it again; no `after`: no events read.
        await store.releaseLease(sessionLeaseName(s.id), "server-a");
        const third = await store.enqueueAndClaim(s.id, followup("again"), {
          owner: "server-b",
          ttlMs: 60_000,
        });
        expect(third.claimed?.events).toEqual([]);
        expect(third.claimed?.pending.map((i) => i.text)).toEqual(["earlier", "now", "later", "again"]);
        expect((await store.getLease(sessionLeaseName(s.id)))?.owner).toBe("server-b");
      } finally {
        stop();
      }
    });

    it("refuses an enqueue-and-claim to an unknown or (when asked) archived session, and claims nothing", async () => {
      const s = await store.createSession();
      await store.updateSession(s.id, { archived: true });
      const claim = { owner: "server-a", ttlMs: 60_000, after: 0 };
      await expect(
        store.enqueueAndClaim(s.id, followup("a"), claim, { refuseArchived: true }),
      ).rejects.toBeInstanceOf(SessionArchivedError);
      await expect(store.enqueueAndClaim("no-such-session", followup("a"), claim)).rejects.toBeInstanceOf(
        SessionNotFoundError,
      );
      expect(await store.pendingInbox(s.id)).toEqual([]);
      expect(await store.getLease(sessionLeaseName(s.id))).toBeUndefined();
    });

    it("consumes the cancel requests of the sessions a claim takes, and only theirs", async () => {
      const [waiting, orphan, other] = await Promise.all([1, 2, 3].map(() => store.createSession()));
      await store.enqueueInbox(waiting!.id, followup("a"));
      await store.append(orphan!.id, [{ type: "turn/start", data: { trigger: "followup" }, turn: 1 }], 0);
      for (const s of [waiting, orphan, other]) await store.requestCancel(s!.id);
      expect(await store.claimPendingSessions("me", 60_000, 10)).toEqual([waiting!.id]);
      expect((await store.claimOrphanedSessions("me", 60_000, 10)).ids).toEqual([orphan!.id]);
      expect(await store.takeCancelRequests(waiting!.id)).toBe(0);
      expect(await store.takeCancelRequests(orphan!.id)).toBe(0);
      expect(await store.takeCancelRequests(other!.id)).toBe(1);
      expect((await store.pendingInbox(waiting!.id)).map((i) => i.text)).toEqual(["a"]);
    });

    // Issue 16 item 12: the claim reads a ready queue the inbox keeps; every way input arrives or leaves counts.
    it("keeps a session claimable while any turn input is pending, whoever wrote or took it", async () => {
      const [s1, s2, s3] = await Promise.all([1, 2, 3].map(() => store.createSession()));
      const a = await store.enqueueInbox(s1!.id, followup("a"));
      const b = await store.enqueueInbox(s1!.id, { ...followup("b"), queue: "next-step", mode: "steer" });
      await store.enqueueInbox(s1!.id, { ...followup("c"), queue: "next-step", mode: "inject" });
      const goal = await store.planning.createGoal(s2!.id, { objective: "o", maxRounds: 3 });
      await store.planning.claimGoalRound(
        s2!.id,
        { id: goal.id, round: 1 },
        { ...followup("round"), source: "goal-round" },
      );
      const d = await store.enqueueInbox(s3!.id, followup("d"));
      await store.discardInbox(s3!.id, [d.id]);
      // One of s1's two turn inputs taken: still waiting. The goal round queued for s2 counts like any input.
      await store.append(s1!.id, step(1), 0, { claimInbox: [a.id] });
      expect(await store.claimPendingSessions("me", 60_000, 10)).toEqual([s1!.id, s2!.id]);
      await store.releaseLease(sessionLeaseName(s1!.id), "me");
      // The last turn input taken (the inject left): s1 is no longer claimable.
      await store.append(s1!.id, step(2), 2, { claimInbox: [b.id] });
      expect(await store.claimPendingSessions("other", 60_000, 10)).toEqual([]);
      const e = await store.enqueueInbox(s1!.id, followup("e"));
      expect(await store.claimPendingSessions("other", 60_000, 10)).toEqual([s1!.id]);
      expect(e.sessionId).toBe(s1!.id);
    });

    it("keeps the ready queue true while other connections enqueue and claim the same session at once", async () => {
      const s = await store.createSession();
      const other = await db.open();
      let seq = 0;
      for (let round = 0; round < 25; round++) {
        const item = await store.enqueueInbox(s.id, followup(`a${round}`));
        // One connection takes the item while another adds the next one.
        const [, added] = await Promise.all([
          store.append(s.id, step(round + 1), seq, { claimInbox: [item.id] }),
          other.enqueueInbox(s.id, followup(`b${round}`)),
        ]);
        seq += 2;
        expect(await other.claimPendingSessions("probe", 60_000, 5)).toEqual([s.id]);
        await other.releaseLease(sessionLeaseName(s.id), "probe");
        await other.append(s.id, step(100 + round), seq, { claimInbox: [added.id] });
        seq += 2;
        expect(await store.claimPendingSessions("probe", 60_000, 5)).toEqual([]);
      }
    });

    it("orders sessions by their oldest pending turn input after a partial claim", async () => {
      const [s1, s2] = await Promise.all([1, 2].map(() => store.createSession()));
      const first = await store.enqueueInbox(s1!.id, followup("1"));
      await store.enqueueInbox(s2!.id, followup("2"));
      await store.enqueueInbox(s1!.id, followup("3"));
      await store.append(s1!.id, step(1), 0, { claimInbox: [first.id] });
      expect(await store.claimPendingSessions("me", 60_000, 10)).toEqual([s2!.id, s1!.id]);
    });
  });

  describe("orphaned turns (issue 16 item 1)", () => {
    const turnStart = (turn: number) => newEvent("turn/start", { trigger: "followup" }, { turn });
    const turnEnd = (turn: number) => newEvent("turn/end", { reason: "completed" }, { turn });

    it("claims a session whose last turn is open and whose lease is not live, once", async () => {
      const [open, closed, held, idle] = await Promise.all([1, 2, 3, 4].map(() => store.createSession()));
      await store.append(open!.id, [turnStart(1), ...step(1)], 0);
      await store.append(closed!.id, [turnStart(1), ...step(1), turnEnd(1)], 0);
      await store.append(held!.id, [turnStart(1)], 0);
      await store.acquireLease(sessionLeaseName(held!.id), "driver", 60_000);
      await store.append(idle!.id, step(1), 0);
      const claim = await store.claimOrphanedSessions("me", 60_000, 10);
      expect(claim.ids).toEqual([open!.id]);
      expect(await store.getLease(sessionLeaseName(open!.id))).toMatchObject({ owner: "me" });
      // The driver's live lease lapses in under a minute (and ours, just taken, later).
      expect(claim.nextLapseMs).toBeGreaterThan(0);
      expect(claim.nextLapseMs).toBeLessThanOrEqual(60_000);
      expect((await store.claimOrphanedSessions("third", 60_000, 10)).ids).toEqual([]);
      // Closing the turn (in a later append, as a repair does) makes the session no orphan.
      await store.append(open!.id, [turnEnd(1)], 3);
      await store.releaseLease(sessionLeaseName(open!.id), "me");
      expect((await store.claimOrphanedSessions("third", 60_000, 10)).ids).toEqual([]);
    });

    it("takes an open turn over once its holder lapses, with the next fence, and tells when that will be", async () => {
      const s = await store.createSession();
      // Long enough that the early claim comes before the lapse even on a loaded machine.
      await store.acquireLease(sessionLeaseName(s.id), "dead", 1_000);
      await store.append(s.id, [turnStart(1), ...step(1)], 0, { leaseOwner: "dead" });
      const early = await store.claimOrphanedSessions("live", 60_000, 5);
      expect(early.ids).toEqual([]);
      expect(early.nextLapseMs).toBeLessThanOrEqual(1_000);
      await sleep((early.nextLapseMs ?? 0) + 30);
      const late = await store.claimOrphanedSessions("live", 60_000, 5);
      expect(late.ids).toEqual([s.id]);
      expect(await store.getLease(sessionLeaseName(s.id))).toMatchObject({ owner: "live", fence: 2 });
    });

    it("never gives one orphan to two concurrent claimers", async () => {
      const sessions = await Promise.all(Array.from({ length: 20 }, () => store.createSession()));
      for (const s of sessions) await store.append(s.id, [turnStart(1)], 0);
      const others = await Promise.all([db.open(), db.open()]);
      const claims = await Promise.all(
        [store, ...others].map((claimer, i) => claimer.claimOrphanedSessions(`owner${i}`, 60_000, 10)),
      );
      const all = claims.flatMap((c) => c.ids);
      expect(new Set(all).size).toBe(all.length);
      const rest = await store.claimOrphanedSessions("late", 60_000, 100);
      expect(new Set([...all, ...rest.ids]).size).toBe(sessions.length);
    });
  });

  describe("leases", () => {
    it("are acquired when free, with fence 1", async () => {
      const lease = await store.acquireLease("job", "a", 60_000);
      expect(lease).toMatchObject({ name: "job", owner: "a", fence: 1 });
      expect(lease!.expiresAt).toBeGreaterThan(Date.now() + 50_000);
      expect(await store.getLease("job")).toEqual(lease);
    });

    it("are refused while another owner holds them", async () => {
      await store.acquireLease("job", "a", 60_000);
      expect(await store.acquireLease("job", "b", 60_000)).toBeUndefined();
      expect((await store.getLease("job"))!.owner).toBe("a");
    });

    it("are extended by their owner's acquire or renew without a new fence", async () => {
      const first = await store.acquireLease("job", "a", 1_000);
      const again = await store.acquireLease("job", "a", 60_000);
      const renewed = await store.renewLease("job", "a", 120_000);
      expect(again).toMatchObject({ owner: "a", fence: first!.fence });
      expect(renewed).toMatchObject({ owner: "a", fence: first!.fence });
      expect(renewed!.expiresAt).toBeGreaterThan(again!.expiresAt);
    });

    it("are renewed and released only by their owner", async () => {
      await store.acquireLease("job", "a", 60_000);
      expect(await store.renewLease("job", "b", 60_000)).toBeUndefined();
      expect(await store.releaseLease("job", "b")).toBe(false);
      expect(await store.releaseLease("job", "a")).toBe(true);
      expect(await store.releaseLease("job", "a")).toBe(false);
      expect(await store.renewLease("job", "a", 60_000)).toBeUndefined();
      expect(await store.getLease("job")).toBeUndefined();
    });

    it("pass to another owner after release with the next fence", async () => {
      await store.acquireLease("job", "a", 60_000);
      await store.releaseLease("job", "a");
      expect(await store.acquireLease("job", "b", 60_000)).toMatchObject({ owner: "b", fence: 2 });
    });

    it("are taken over after expiry with the next fence, and the old owner can no longer renew", async () => {
      await store.acquireLease("job", "a", 50);
      await sleep(120);
      expect(await store.getLease("job")).toBeUndefined();
      expect(await store.acquireLease("job", "b", 60_000)).toMatchObject({ owner: "b", fence: 2 });
      expect(await store.renewLease("job", "a", 60_000)).toBeUndefined();
      expect(await store.acquireLease("job", "a", 60_000)).toBeUndefined();
    });

    it("lapsed but not taken over, can still be renewed by their owner", async () => {
      await store.acquireLease("job", "a", 50);
      await sleep(120);
      expect(await store.renewLease("job", "a", 60_000)).toMatchObject({ owner: "a", fence: 1 });
    });

    it("refuse a ttl that is not positive", async () => {
      await expect(store.acquireLease("job", "a", 0)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });
  });

  describe("blobs", () => {
    it("keep bytes and text exactly", async () => {
      const s = await store.createSession();
      const bytes = new Uint8Array([0, 1, 2, 253, 254, 255]);
      const binary = await store.putBlob(s.id, bytes, { tool: "read" });
      const text = await store.putBlob(s.id, "spilled output ✓");
      expect(binary).toMatchObject({ sessionId: s.id, bytes: 6, metadata: { tool: "read" } });
      expect(binary.id).toMatch(UUID_V7);
      expect(text.bytes).toBe(Buffer.byteLength("spilled output ✓"));
      const got = await store.getBlob(binary.id);
      expect(got!.ref).toEqual(binary);
      expect([...got!.content]).toEqual([...bytes]);
      expect((await store.getBlob(text.id))!.content.toString("utf8")).toBe("spilled output ✓");
    });

    it("count a session's bytes for its spill quota", async () => {
      const s = await store.createSession();
      const other = await store.createSession();
      expect(await store.sessionBlobBytes(s.id)).toBe(0);
      await store.putBlob(s.id, "12345");
      await store.putBlob(s.id, new Uint8Array(7));
      await store.putBlob(other.id, "x".repeat(100));
      expect(await store.sessionBlobBytes(s.id)).toBe(12);
      expect(await store.sessionBlobBytes("nope")).toBe(0);
    });

    it("are undefined when unknown, and need a known session", async () => {
      expect(await store.getBlob("nope")).toBeUndefined();
      await expect(store.putBlob("nope", "x")).rejects.toBeInstanceOf(SessionNotFoundError);
    });
  });

  describe("follow", () => {
    it("yields the events after `after`, then later appends from any store instance, in order", async () => {
      const s = await store.createSession();
      await store.append(s.id, step(1), 0);
      const other = await db.open();
      const controller = new AbortController();
      const seen: number[] = [];
      for await (const event of store.follow(s.id, { after: 1, signal: controller.signal })) {
        seen.push(event.seq);
        if (event.seq === 2) await store.append(s.id, step(2), 2);
        if (event.seq === 4) await other.append(s.id, step(3), 4);
        if (event.seq === 6) controller.abort();
      }
      expect(seen).toEqual([2, 3, 4, 5, 6]);
    });

    it("ends without an error when aborted while waiting", async () => {
      const s = await store.createSession();
      await store.append(s.id, step(1), 0);
      const controller = new AbortController();
      const iterator = store.follow(s.id, { signal: controller.signal })[Symbol.asyncIterator]();
      expect((await iterator.next()).value).toMatchObject({ seq: 1 });
      expect((await iterator.next()).value).toMatchObject({ seq: 2 });
      const waiting = iterator.next();
      controller.abort();
      expect(await waiting).toEqual({ done: true, value: undefined });
    });
  });

  describe("subscribe", () => {
    it("skips the resync of subscribing when asked (initialResync: false), not later notifications", async () => {
      const s = await store.createSession();
      const { stop: stopLive } = await liveSubscription(store, { events: false }); // the listener is up
      const seen: StoreNotification[] = [];
      let heard!: (n: StoreNotification) => void;
      const inbox = new Promise<StoreNotification>((resolve) => {
        heard = resolve;
      });
      const stop = store.subscribe(
        (n) => {
          seen.push(n);
          if (n.channel === "inbox") heard(n);
        },
        { sessionId: s.id, initialResync: false },
      );
      const item = await store.enqueueInbox(s.id, followup("hi"));
      expect(await inbox).toEqual({ channel: "inbox", sessionId: s.id, itemId: item.id });
      expect(seen.filter((n) => n.channel === "resync")).toEqual([]);
      stop();
      stopLive();
    });

    it("announces this store's appends and inbox changes", async () => {
      const s = await store.createSession();
      const { seen, stop } = await liveSubscription(store);
      const appended = nextNotification(store, (n) => n.channel === "events" && n.sessionId === s.id);
      await store.append(s.id, step(1), 0);
      expect(await appended.received).toEqual({ channel: "events", sessionId: s.id, seq: 2 });
      const inbox = nextNotification(store, (n) => n.channel === "inbox" && n.sessionId === s.id);
      const item = await store.enqueueInbox(s.id, followup("hi"));
      expect(await inbox.received).toEqual({ channel: "inbox", sessionId: s.id, itemId: item.id });
      const discarded = nextNotification(store, (n) => n.channel === "inbox" && n.sessionId === s.id);
      await store.discardInbox(s.id, [item.id]);
      expect(await discarded.received).toEqual({ channel: "inbox", sessionId: s.id });
      stop();
      expect(seen.length).toBeGreaterThan(0);
    });

    it("announces another store instance's appends and inbox changes", async () => {
      const s = await store.createSession();
      const other = await db.open();
      await liveSubscription(store);
      const precise = harness.crossProcessNotificationsArePrecise;

      const appended = nextNotification(store, (n) =>
        precise ? n.channel === "events" && n.sessionId === s.id && n.seq === 2 : n.channel === "resync",
      );
      await other.append(s.id, step(1), 0);
      await appended.received;

      const enqueued = nextNotification(store, (n) =>
        precise ? n.channel === "inbox" && n.sessionId === s.id : n.channel === "resync",
      );
      await other.enqueueInbox(s.id, followup("from elsewhere"));
      await enqueued.received;
    });

    it("tells appends only to subscribers that asked for events", async () => {
      const s = await store.createSession();
      const quiet = await liveSubscription(store, { events: false });
      const witness = nextNotification(store, (n) => n.channel === "events" && n.sessionId === s.id);
      await liveSubscription(store); // the events channel is live
      await store.append(s.id, step(1), 0);
      await witness.received;
      const inbox = nextNotification(store, (n) => n.channel === "inbox" && n.sessionId === s.id);
      await store.enqueueInbox(s.id, followup("hi"));
      await inbox.received;
      // The quiet subscription hears the inbox notification sent after the append: once it has, it would
      // have heard the append's too, had it been sent to it.
      await waitUntil(
        () => quiet.seen.some((n) => n.channel === "inbox" && n.sessionId === s.id),
        "the quiet subscription's inbox notification",
      );
      expect(quiet.seen.some((n) => n.channel === "events")).toBe(false);
      quiet.stop();
    });

    it("stops delivering after unsubscribe", async () => {
      const s = await store.createSession();
      const { seen, stop } = await liveSubscription(store);
      stop();
      const count = seen.length;
      const witness = nextNotification(store, (n) => n.channel === "events");
      await store.append(s.id, step(1), 0);
      await witness.received;
      expect(seen.length).toBe(count);
    });
  });
}
