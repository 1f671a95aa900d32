/**
 * The session listing's search and by-activity paging (the dashboard's `GET /v1/sessions?query=&cursor=`),
 * on SQLite and on PostgreSQL alike: most recently active first, ties broken by id, every session once
 * across pages, and a text filter over id and title.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionRow, Store } from "../../src/store/store.js";
import { testDatabaseUrl } from "../support/database.js";
import { type FreshDatabase, postgresHarness, type StoreHarness, sqliteHarness } from "./harness.js";

function listing(harness: StoreHarness) {
  let db: FreshDatabase | undefined;
  afterEach(async () => {
    await db?.dispose();
    db = undefined;
  });

  /** Sessions with the given titles and `updated_at` times (set directly: the API only ever says "now"). */
  async function seed(rows: { title: string; at: string }[]): Promise<{ store: Store; made: SessionRow[] }> {
    db = await harness.fresh();
    const store = await db.open();
    const made: SessionRow[] = [];
    for (const { title, at } of rows) {
      const row = await store.createSession({ title });
      const set =
        harness.name === "sqlite"
          ? "UPDATE sessions SET updated_at = ? WHERE id = ?"
          : "UPDATE sessions SET updated_at = $1::timestamptz WHERE id = $2";
      await db.exec(set, [at, row.id]);
      made.push(row);
    }
    return { store, made };
  }

  it("pages by last activity with a cursor: every session once, in order, ties broken by id", async () => {
    const { store, made } = await seed([
      { title: "oldest", at: "2026-01-01T10:00:00.000Z" },
      { title: "tie one", at: "2026-01-03T10:00:00.000Z" },
      { title: "newest", at: "2026-01-05T10:00:00.000Z" },
      { title: "tie two", at: "2026-01-03T10:00:00.000Z" },
      { title: "middle", at: "2026-01-02T10:00:00.000Z" },
    ]);
    const [oldest, tie1, newest, tie2, middle] = made.map((r) => r.id);
    const seen: string[] = [];
    let after: { updatedAt: string; id: string } | undefined;
    for (let page = 0; page < 5; page++) {
      const rows = await store.listSessions({ order: "activity", limit: 2, ...(after ? { after } : {}) });
      seen.push(...rows.map((r) => r.id));
      if (rows.length < 2) break;
      const last = rows.at(-1)!;
      after = { updatedAt: last.updatedAt, id: last.id };
    }
    // The two ties: the larger id first (ids sort by creation, so tie two).
    expect(seen).toEqual([newest, tie2, tie1, middle, oldest]);
  });

  it("keeps microseconds from splitting a page edge (PostgreSQL keeps them, the cursor does not)", async () => {
    const { store, made } = await seed([
      { title: "a", at: "2026-02-01T10:00:00.123456Z" },
      { title: "b", at: "2026-02-01T10:00:00.123999Z" },
      { title: "c", at: "2026-02-01T10:00:00.122Z" },
    ]);
    const first = await store.listSessions({ order: "activity", limit: 1 });
    const rest = await store.listSessions({
      order: "activity",
      limit: 10,
      after: { updatedAt: first[0]!.updatedAt, id: first[0]!.id },
    });
    const ids = [...first, ...rest].map((r) => r.id);
    expect(new Set(ids).size).toBe(3);
    expect(ids.at(-1)).toBe(made[2]!.id);
  });

  it("finds sessions by a piece of the title (any case) or of the id, in both orders", async () => {
    const { store, made } = await seed([
      { title: "Deploy the Website", at: "2026-03-01T10:00:00.000Z" },
      { title: "fix the build", at: "2026-03-02T10:00:00.000Z" },
      { title: "website copy edits", at: "2026-03-03T10:00:00.000Z" },
    ]);
    const titles = (rows: SessionRow[]) => rows.map((r) => r.title);
    expect(titles(await store.listSessions({ order: "activity", query: "WEBSITE" }))).toEqual([
      "website copy edits",
      "Deploy the Website",
    ]);
    expect(titles(await store.listSessions({ query: "build" }))).toEqual(["fix the build"]);
    const tail = made[0]!.id.slice(-10);
    expect((await store.listSessions({ order: "activity", query: tail })).map((r) => r.id)).toEqual([
      made[0]!.id,
    ]);
    expect(await store.listSessions({ order: "activity", query: "nothing like it" })).toEqual([]);
    // A blank query filters nothing.
    expect(await store.listSessions({ order: "activity", query: "  " })).toHaveLength(3);
  });

  it("refuses a cursor without the by-activity order, a mixed before, and a cursor that is not a time", async () => {
    const { store, made } = await seed([{ title: "x", at: "2026-04-01T10:00:00.000Z" }]);
    const after = { updatedAt: made[0]!.updatedAt, id: made[0]!.id };
    await expect(store.listSessions({ after })).rejects.toThrow(/order: activity/);
    await expect(store.listSessions({ order: "activity", before: made[0]!.id })).rejects.toThrow(/after/);
    await expect(
      store.listSessions({ order: "activity", after: { updatedAt: "yesterday", id: "x" } }),
    ).rejects.toThrow(/cursor/);
  });
}

describe("session listing on SQLite", () => listing(sqliteHarness()));
describe("session listing on PostgreSQL", () => listing(postgresHarness(testDatabaseUrl())));
