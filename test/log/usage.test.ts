/**
 * M20: usage per request, turn and session from real logs: the loop against the fake provider (both wire
 * formats), a retried request, a compaction request, and children rolled up into parents on both stores.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compactionPlugin } from "../../src/context/compaction/plugin.js";
import type { LogEvent, NewEvent, Usage } from "../../src/log/events.js";
import { emptyUsage, type UsageTotals, usageOf, usageTotalsOf } from "../../src/log/usage.js";
import { forkSession } from "../../src/loop/fork.js";
import { collectReply } from "../../src/model/index.js";
import { costOf, priceFor } from "../../src/model/pricing.js";
import { sessionUsage } from "../../src/presets/session-usage.js";
import { llmRetryPlugin } from "../../src/retry/llm-retry.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { FakeReply } from "../../testing/fake-provider/index.js";
import { loopFixture, personaPlugin } from "../loop/harness.js";
import { adapterFor, closeFakes, fakeWith, request } from "../model/support.js";
import { testDatabaseUrl } from "../support/database.js";

afterEach(closeFakes);

const totals = (t: Partial<UsageTotals>): UsageTotals => ({ ...emptyUsage(), ...t });
const tool = (id: string, usage: FakeReply["usage"]): FakeReply => ({
  toolCalls: [{ id, name: "work", arguments: {} }],
  usage,
});
const tools = { work: { run: () => ({ text: "result ".repeat(300) }) } };

const STORES = [
  ["SQLite", () => undefined],
  ["PostgreSQL", () => testDatabaseUrl()],
] as const;

describe("M20 usage of a real run", () => {
  for (const [name, databaseUrl] of STORES) {
    it(`counts each request once, cached input apart, per turn and per session (${name})`, async () => {
      const url = databaseUrl();
      const f = await loopFixture({
        script: [
          tool("a", { input: 100, cacheRead: 400, output: 20 }),
          { text: "first done", usage: { input: 50, cacheRead: 500, output: 30 } },
          { text: "second done", usage: { input: 7, cacheRead: 900, output: 3 } },
        ],
        tools,
        ...(url ? { databaseUrl: url } : {}),
      });
      try {
        await f.agent.followup("go");
        await f.agent.whenIdle();
        await f.agent.followup("again");
        await f.agent.whenIdle();
        const { session, byTurn, lastRequest } = usageOf(await f.events());
        expect(session).toEqual(totals({ requests: 3, input: 157, cachedInput: 1800, output: 53 }));
        expect(byTurn.get(1)).toEqual(totals({ requests: 2, input: 150, cachedInput: 900, output: 50 }));
        expect(byTurn.get(2)).toEqual(totals({ requests: 1, input: 7, cachedInput: 900, output: 3 }));
        expect(lastRequest).toEqual(totals({ requests: 1, input: 7, cachedInput: 900, output: 3 }));
      } finally {
        await f.close();
      }
    });
  }

  it("a retried request counts once: the failed attempt's provider usage never arrived (M16, M18)", async () => {
    const f = await loopFixture({
      script: [
        // Dropped after the first text frames: the usage chunk (sent after the finish) never arrives.
        {
          text: "a partial answer that is cut",
          usage: { input: 999, output: 999 },
          fault: { kind: "drop", afterFrames: 3 },
        },
        { text: "whole answer", usage: { input: 40, cacheRead: 60, output: 12 } },
      ],
      plugins: [
        personaPlugin,
        llmRetryPlugin({ maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0, jitterRatio: 0 }),
      ],
    });
    try {
      await f.agent.followup("go");
      await f.agent.whenIdle();
      const events = await f.events();
      expect(f.fake.requests).toHaveLength(2);
      expect(events.filter((e) => e.type === "assistant/attempt")).toHaveLength(1);
      expect(events.filter((e) => e.type === "llm/retry-started")).toHaveLength(1);
      expect(usageOf(events).session).toEqual(
        totals({ requests: 1, input: 40, cachedInput: 60, output: 12 }),
      );
    } finally {
      await f.close();
    }
  });

  it("the compaction summary request is counted in its turn (C6)", async () => {
    const overflow: FakeReply = {
      status: 400,
      body: {
        error: {
          message: "This model's maximum context length is 1000 tokens",
          type: "invalid_request_error",
        },
      },
    };
    const f = await loopFixture({
      script: [
        tool("a", { input: 10, output: 1 }),
        tool("b", { input: 20, output: 2 }),
        overflow,
        {
          text: "## Primary Request and Intent\n- do the thing",
          usage: { input: 300, cacheRead: 5, output: 40 },
        },
        { text: "done", usage: { input: 30, output: 3 } },
      ],
      tools,
      plugins: [personaPlugin, compactionPlugin()],
    });
    try {
      await f.agent.followup("go");
      await f.agent.whenIdle();
      const events = await f.events();
      const summary = events.find(
        (e): e is LogEvent<"compaction/summary"> => e.type === "compaction/summary",
      );
      expect(summary?.data.usage).toMatchObject({ inputTokens: 300, cacheReadTokens: 5, outputTokens: 40 });
      const { session, byTurn } = usageOf(events);
      expect(session).toEqual(totals({ requests: 4, input: 360, cachedInput: 5, output: 46 }));
      expect(byTurn.get(1)).toEqual(session);
    } finally {
      await f.close();
    }
  });
});

describe("M20 usage as both adapters record it", () => {
  it("Anthropic wire: cache reads apart, cache writes inside input and priced at the write rate", async () => {
    const fake = await fakeWith([
      { text: "hi", usage: { input: 5, cacheRead: 100, cacheWrite: 20, output: 7 } },
    ]);
    const reply = await collectReply(
      adapterFor(fake, "anthropic").stream(request([{ role: "user", text: "q" }])),
    );
    const one = usageTotalsOf(reply.usage);
    expect(one).toEqual({
      requests: 1,
      input: 25,
      cachedInput: 100,
      output: 7,
      reasoning: 0,
      cacheWriteInput: 20,
    });
    // claude-sonnet-5: $2 input, $2.50 5m writes, $0.20 hits, $10 output per MTok.
    const cost = costOf(one, priceFor("anthropic", "claude-sonnet-5"));
    expect(cost).toBeCloseTo((5 * 2 + 20 * 2.5 + 100 * 0.2 + 7 * 10) / 1e6, 12);
  });

  it("OpenAI wire: the combined prompt count is split into uncached and cached input", async () => {
    const fake = await fakeWith([{ text: "hi", usage: { input: 11, cacheRead: 300, output: 4 } }]);
    const reply = await collectReply(
      adapterFor(fake, "deepseek").stream(request([{ role: "user", text: "q" }])),
    );
    expect(usageTotalsOf(reply.usage)).toEqual(
      totals({ requests: 1, input: 11, cachedInput: 300, output: 4 }),
    );
  });

  it("a recorded DeepSeek stream keeps its cache hits and reasoning tokens", async () => {
    const dir = new URL("../../../shared/fixtures/provider-streams/", import.meta.url);
    const raw = readFileSync(new URL("deepseek-tool-call.sse", dir));
    const fake = await fakeWith([{ raw, rawChunkSizes: [7, 64, 3] }]);
    const reply = await collectReply(
      adapterFor(fake, "openai-compatible").stream(request([{ role: "user", text: "q" }])),
    );
    // prompt_tokens 339 with cached_tokens 320, completion 83 with reasoning_tokens 39.
    expect(usageTotalsOf(reply.usage)).toEqual(
      totals({ requests: 1, input: 19, cachedInput: 320, output: 83, reasoning: 39 }),
    );
  });
});

const usage = (inputTokens: number, cacheReadTokens: number, outputTokens: number): Usage => ({
  inputTokens,
  cacheReadTokens,
  cacheWriteTokens: 0,
  outputTokens,
});

function reply(u: Usage, turn: number): NewEvent {
  return {
    type: "assistant/message",
    data: {
      blocks: [{ type: "text", text: "ok" }],
      provider: "deepseek",
      model: "deepseek-flash",
      finish: "stop",
      usage: u,
    },
    turn,
    step: 1,
  };
}

async function appendTurn(store: Store, id: string, u: Usage): Promise<void> {
  const row = await store.getSession(id);
  const turn = ((await store.read(id)).filter((e) => e.type === "turn/start").length ?? 0) + 1;
  await store.append(
    id,
    [
      { type: "turn/start", data: {}, turn },
      { type: "user/message", data: { text: "go", source: "human" }, turn },
      reply(u, turn),
      { type: "turn/end", data: { reason: "completed" }, turn },
    ],
    row?.lastSeq ?? 0,
  );
}

describe("M20 children roll up into their parents (S1)", () => {
  for (const [name, databaseUrl] of STORES) {
    it(`a parent's usage with its subagents, their children and a fork, each counted once (${name})`, async () => {
      const url = databaseUrl();
      const store = await openStore({
        home: mkdtempSync(join(tmpdir(), "bdsh-usage-")),
        ...(url ? { databaseUrl: url } : {}),
      });
      try {
        const parent = await store.createSession({ title: "parent" });
        await appendTurn(store, parent.id, usage(100, 1000, 10));
        const child = await store.createSession({ parentId: parent.id, kind: "subagent" });
        await appendTurn(store, child.id, usage(20, 200, 2));
        const grandchild = await store.createSession({ parentId: child.id, kind: "subagent" });
        await appendTurn(store, grandchild.id, usage(3, 30, 1));
        await store.updateSession(grandchild.id, { archived: true });
        // S1: a fork starts with a copy of the parent's turn; only its own later turn is its usage.
        const fork = await forkSession(store, parent.id);
        await appendTurn(store, fork.id, usage(4, 40, 4));
        const other = await store.createSession({ title: "unrelated" });
        await appendTurn(store, other.id, usage(9999, 0, 9999));

        const price = priceFor("deepseek", "deepseek-flash");
        const result = await sessionUsage(store, parent.id, price);
        expect(result.own).toEqual(totals({ requests: 1, input: 100, cachedInput: 1000, output: 10 }));
        expect(result.withChildren).toEqual(
          totals({ requests: 4, input: 127, cachedInput: 1270, output: 17 }),
        );
        expect(result.cost).toBeCloseTo((127 * 0.3 + 1270 * 0.006 + 17 * 1.2) / 1e6, 12);

        const forkUsage = await sessionUsage(store, fork.id, price);
        expect(forkUsage.own).toEqual(totals({ requests: 1, input: 4, cachedInput: 40, output: 4 }));
        const childUsage = await sessionUsage(store, child.id, undefined);
        expect(childUsage.withChildren).toEqual(
          totals({ requests: 2, input: 23, cachedInput: 230, output: 3 }),
        );
        expect(childUsage.cost).toBeUndefined();
      } finally {
        await store.close();
      }
    });
  }
});
