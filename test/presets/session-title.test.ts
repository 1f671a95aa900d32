/**
 * Issue 15 item 4: the session title side request on real runs of the standard preset (SQLite and
 * PostgreSQL), against the fake provider, which answers `x-bdsh-purpose: title` requests apart from the
 * main script. Order is asserted, never timings.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Config, DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { cleanTitle } from "../../src/presets/session-title.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import {
  DEFAULT_FAKE_TITLE,
  type FakeProvider,
  type FakeReply,
  type FakeScript,
  startFakeProvider,
} from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
import { openTestAgent } from "../support/test-agent.js";
import { guard } from "../support/wait.js";

const STORES = [
  ["SQLite", () => undefined],
  ["PostgreSQL", () => testDatabaseUrl()],
] as const;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(options: {
  titles?: FakeReply | FakeScript;
  databaseUrl?: string | undefined;
  config?: (config: Config) => Config;
  title?: string;
}): Promise<{ fake: FakeProvider; store: Store; run: (text: string) => Promise<string> }> {
  const home = mkdtempSync(join(tmpdir(), "bdsh-title-"));
  const workspace = mkdtempSync(join(tmpdir(), "bdsh-title-ws-"));
  const fake = await startFakeProvider({
    script: [{ text: "Done.", usage: { input: 100, output: 10 } }, { text: "Again." }],
    ...(options.titles !== undefined ? { titles: options.titles } : {}),
  });
  cleanups.push(() => fake.close());
  const store = await openStore({
    home,
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
  });
  cleanups.push(() => store.close());
  const base: Config = {
    ...DEFAULT_CONFIG,
    model: { ...DEFAULT_CONFIG.model, base_url: fake.url },
    retry: { ...DEFAULT_CONFIG.retry, max_retries: 0 },
  };
  const config = options.config ? options.config(base) : base;
  const { agent, session } = await openTestAgent({
    store,
    config,
    workspace,
    home,
    ...(options.title ? { title: options.title } : {}),
  });
  cleanups.push(() => agent.close());
  return {
    fake,
    store,
    run: async (text) => {
      await agent.followup(text);
      await agent.whenIdle();
      return session.id;
    },
  };
}

const types = (events: readonly LogEvent[]) => events.map((e) => e.type);

describe("session titles", () => {
  for (const [name, databaseUrl] of STORES) {
    it(`a real run gets a model-written title, with its usage, in the log and the store (${name})`, async () => {
      const { fake, store, run } = await setup({
        databaseUrl: databaseUrl(),
        titles: { text: '"Fix the parser test."\n', usage: { input: 40, output: 6 } },
      });
      const id = await run("the parser test fails on empty input, please fix it");
      await vi.waitFor(
        async () => {
          expect((await store.getSession(id))?.title).toBe("Fix the parser test");
        },
        { timeout: guard(30_000) },
      );
      const events = await store.read(id);
      const title = events.find((e) => e.type === "session/title");
      expect(title?.data).toEqual({
        title: "Fix the parser test",
        usage: { inputTokens: 40, outputTokens: 6, cacheReadTokens: 0, cacheWriteTokens: 0 },
      });
      expect(types(events).filter((t) => t === "session/title")).toHaveLength(1);
      // The main script saw exactly its one request; the title request went apart.
      expect(fake.requests).toHaveLength(1);
      expect(fake.titleRequests).toHaveLength(1);
      const sent = fake.titleRequests[0]!;
      expect(sent.headers["x-bdsh-purpose"]).toBe("title");
      expect(sent.body?.tools).toBeUndefined();
      expect(sent.body?.thinking).toEqual({ type: "disabled" }); // M5: titles use effort off
      expect(JSON.stringify(sent.body?.messages)).toContain("the parser test fails on empty input");
      expect(fake.requests[0]!.headers["x-bdsh-purpose"]).toBeUndefined();
      const listed = await store.listSessions();
      expect(listed.find((s) => s.id === id)?.title).toBe("Fix the parser test");
    });

    it(`the turn does not wait for a slow title: turn/end first, then session/title (${name})`, async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const { fake, store, run } = await setup({
        databaseUrl: databaseUrl(),
        titles: async () => {
          await gate;
          return { text: "Slow title" };
        },
      });
      const appends = vi.spyOn(store, "append");
      const id = await run("write a changelog");
      const before = await store.read(id);
      expect(before.at(-1)?.type).toBe("agent/status");
      expect(types(before)).toContain("turn/end");
      expect(types(before)).not.toContain("session/title");
      expect(fake.titleRequests).toHaveLength(1); // asked, not answered
      release();
      await vi.waitFor(
        async () => {
          expect((await store.getSession(id))?.title).toBe("Slow title");
        },
        { timeout: guard(30_000) },
      );
      const events = await store.read(id);
      const turnEnd = events.findLast((e) => e.type === "turn/end")!;
      const title = events.find((e) => e.type === "session/title")!;
      expect(title.seq).toBeGreaterThan(turnEnd.seq);
      expect(turnEnd.data).toEqual({ reason: "completed" });
      // Its own append, after the drive, under the lease: committed, not waited onto the disk (it is derived).
      const titleAppend = appends.mock.calls.find(([, events]) =>
        events.some((e) => e.type === "session/title"),
      );
      expect(titleAppend?.[3]).toMatchObject({ durability: "commit", releaseLease: true });
    });
  }

  it("a title answered during the drive is logged by the driver, and a second turn runs on (SQLite)", async () => {
    const { fake, store, run } = await setup({});
    const id = await run("first");
    await vi.waitFor(
      async () => {
        expect((await store.getSession(id))?.title).toBe(DEFAULT_FAKE_TITLE);
      },
      { timeout: guard(30_000) },
    );
    await run("second"); // the agent's log took the title in; its next appends do not conflict
    const events = await store.read(id);
    expect(events.filter((e) => e.type === "turn/end").map((e) => e.data)).toEqual([
      { reason: "completed" },
      { reason: "completed" },
    ]);
    expect(fake.requests).toHaveLength(2);
    expect(fake.titleRequests).toHaveLength(1); // once per session
  });

  it("a failing title request leaves the turn untouched", async () => {
    const failing = await setup({ titles: { status: 500 } });
    const failedId = await failing.run("do the thing");
    await vi.waitFor(() => expect(failing.fake.titleRequests).toHaveLength(1), { timeout: guard(30_000) });
    const off = await setup({ config: (c) => ({ ...c, session: { titles: false } }) });
    const offId = await off.run("do the thing");
    const failedEvents = await failing.store.read(failedId);
    expect(types(failedEvents)).toEqual(types(await off.store.read(offId)));
    expect(failedEvents.findLast((e) => e.type === "turn/end")?.data).toEqual({ reason: "completed" });
    expect(types(failedEvents)).not.toContain("agent/error");
    expect((await failing.store.getSession(failedId))?.title).toBeNull();
  });

  it("session.titles: false sends no title request", async () => {
    const { fake, store, run } = await setup({ config: (c) => ({ ...c, session: { titles: false } }) });
    const id = await run("hello");
    expect(fake.requests).toHaveLength(1);
    expect(fake.titleRequests).toHaveLength(0);
    expect(types(await store.read(id))).not.toContain("session/title");
  });

  it("an explicit title is kept and no title request is made", async () => {
    const { fake, store, run } = await setup({ title: "My own title" });
    const id = await run("hello");
    expect(fake.titleRequests).toHaveLength(0);
    expect((await store.getSession(id))?.title).toBe("My own title");
  });
});

describe("cleanTitle", () => {
  it("keeps one line, drops quotes, trailing punctuation and control characters, caps at 80", () => {
    expect(cleanTitle('  "Fix the parser."  ')).toBe("Fix the parser");
    expect(cleanTitle("Title: Refactor\nthe store\u0007!")).toBe("Refactor the store");
    expect(cleanTitle("\u001b[31mRed\u001b[0m alert")).toBe("[31mRed [0m alert");
    const long = cleanTitle("word ".repeat(40));
    expect(long.length).toBeLessThanOrEqual(80);
    expect(long.endsWith(" ")).toBe(false);
    expect(cleanTitle("...")).toBe("");
  });
});
