/**
 * Issue 16 item 6: a cross-server cancel (L7) is an inbox row of its own kind, consumed by the server that
 * drives the session, and never input. A session runner (started: it listens) on SQLite and on PostgreSQL;
 * the cancel is requested through a second store connection, as another server's cancel route does, so
 * it reaches the runner the way it would across servers (PostgreSQL: NOTIFY; SQLite: another connection's
 * commit, seen as a resync). Checked: on an idle session a request starts no turn and opens no agent, a
 * stale one neither aborts nor reaches the next turn, and during a turn it aborts that turn (the pending
 * inbox cleared) without ever being shown to the model.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { SessionRunner } from "../../src/server/session-runner.js";
import { openStore } from "../../src/store/open-store.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
import { openTestAgent } from "../support/test-agent.js";
import {
  deferred,
  type Message,
  type Scenario,
  startScenarioProvider,
  testConfig,
  tmpHome,
  turnEnd,
  waitForEvent,
} from "./harness.js";

let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;

beforeAll(async () => {
  ({ fake, scenario } = await startScenarioProvider());
});
afterAll(async () => {
  await fake?.close();
});

const targets: Array<{ name: string; databaseUrl?: () => string }> = [
  { name: "sqlite" },
  { name: "postgres", databaseUrl: () => testDatabaseUrl() },
];

const contentOf = (m: Message) =>
  typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "");
/** The harness's own user-role notes: the runtime-context snapshot and the time of the request. */
const HARNESS_NOTES = /^(Runtime context for this session\.|Time sampled while preparing turn )/;
/** The user messages a request carried, apart from the harness's notes. */
const userTexts = (messages: Message[]) =>
  messages
    .filter((m) => m.role === "user")
    .map(contentOf)
    .filter((text) => !HARNESS_NOTES.test(text));

describe.each(targets)("a cancel request from another server ($name)", (target) => {
  let home: string;
  let workspace: string;
  let config: Config;
  let store: Store;
  /** Another server's connection: where the cancel routes write. */
  let other: Store;
  let runner: SessionRunner;
  let opened = 0;
  const errors: unknown[] = [];

  beforeAll(async () => {
    ({ home, workspace } = tmpHome(`bdsh-cancel-${target.name}-`));
    config = testConfig(fake.url);
    const where = { home, ...(target.databaseUrl ? { databaseUrl: target.databaseUrl() } : {}) };
    store = await openStore(where);
    other = await openStore(where);
    const owner = `cancel-${target.name}`;
    runner = new SessionRunner({
      store,
      owner,
      open: async (sessionId) => {
        opened++;
        const { agent } = await openTestAgent({
          store,
          config,
          workspace,
          home,
          sessionId,
          owner,
          approval: "never",
          leaseTtlMs: 5_000,
        });
        return agent;
      },
      sweepIntervalMs: 60_000,
      maxSessions: 10,
      maxRunning: 10,
      leaseTtlMs: 5_000,
      shutdownGraceMs: 0,
      onError: (error) => errors.push(error),
    });
    runner.start();
  });
  afterAll(async () => {
    await runner?.stop();
    await other?.close();
    await store?.close();
  });

  const followup = (sessionId: string, text: string) =>
    other.enqueueInbox(sessionId, { queue: "next-turn", mode: "followup", source: "human", text });

  it("starts no turn on an idle session, and a stale one neither aborts nor reaches the next turn", async () => {
    const seen: Message[][] = [];
    const marker = scenario(`idle-${target.name}`, (_request, messages) => {
      seen.push(messages);
      return { text: "answered" };
    });
    const session = await store.createSession({ metadata: { workspace } });
    const openedBefore = opened;
    await other.requestCancel(session.id);
    // The notification's wake-up and a claim pass of our own: neither finds work.
    await runner.wake(session.id);
    await runner.sweep();
    expect(await store.read(session.id)).toEqual([]);
    expect(await store.getLease(sessionLeaseName(session.id))).toBeUndefined();
    expect(opened).toBe(openedBefore);
    expect(await store.pendingInbox(session.id)).toEqual([]);

    // An agent asked to drive directly finds no turn input either (it opens no turn).
    const agent = await runner.agent(session.id);
    await agent.open();
    expect((await store.read(session.id)).filter((e) => e.type === "turn/start")).toEqual([]);

    // Real input later: the turn runs to its end; the stale request was taken, not delivered.
    await followup(session.id, `${marker} hello`);
    const end = await waitForEvent(store, session.id, turnEnd);
    expect(end.data.reason).toBe("completed");
    expect(seen).toHaveLength(1);
    expect(userTexts(seen[0]!)).toEqual([`${marker} hello`]);
    const spliced = (await store.read(session.id)).filter(
      (e): e is LogEvent<"user/message"> => e.type === "user/message" && e.data.inboxId !== undefined,
    );
    expect(spliced.map((e) => e.data.text)).toEqual([`${marker} hello`]);
    expect(await store.takeCancelRequests(session.id)).toBe(0);
    expect(errors).toEqual([]);
  });

  it("aborts the running turn, clears the pending inbox, and never reaches the model", async () => {
    const arrived = deferred<void>();
    const release = deferred<void>();
    const seen: Message[][] = [];
    const marker = scenario(`running-${target.name}`, async (_request, messages) => {
      seen.push(messages);
      arrived.resolve();
      await release.promise;
      return { text: "too late" };
    });
    const session = await store.createSession({ metadata: { workspace } });
    await followup(session.id, `${marker} hang`);
    await runner.sweep();
    await arrived.promise;
    // What another server's cancel route does when this one drives: clear the input, then ask the driver.
    const queued = await followup(session.id, "queued behind the turn");
    expect(await other.discardInbox(session.id, [queued.id])).toBe(1);
    await other.requestCancel(session.id);
    const end = await waitForEvent(store, session.id, turnEnd);
    expect(end.data.reason).toBe("aborted");
    release.resolve();
    await waitForEvent(store, session.id, (e) => e.type === "agent/status" && e.data.status === "idle");
    expect(await store.pendingInbox(session.id)).toEqual([]);
    expect(await store.takeCancelRequests(session.id)).toBe(0);
    expect(seen).toHaveLength(1);
    expect(userTexts(seen[0]!)).toEqual([`${marker} hang`]);
    const events = await store.read(session.id);
    expect(events.filter((e) => e.type === "turn/start")).toHaveLength(1);
    expect(
      events
        .filter(
          (e): e is LogEvent<"user/message"> => e.type === "user/message" && e.data.inboxId !== undefined,
        )
        .map((e) => e.data.text),
    ).toEqual([`${marker} hang`]);
    expect(errors).toEqual([]);
  });
});
