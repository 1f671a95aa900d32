import { describe, expect, it } from "vitest";
import { compactionPlugin } from "../../src/context/compaction/plugin.js";
import {
  COMPACTION_BUSY,
  COMPACTION_INSTRUCTION,
  isCheckpointText,
  NOTHING_TO_COMPACT,
  OVERFLOW_UNRECOVERED,
  SUMMARY_EMPTY,
  SUMMARY_NOT_SMALLER,
  SUMMARY_TRUNCATED,
} from "../../src/context/compaction/texts.js";
import type { LogEvent } from "../../src/log/events.js";
import { findPairingError } from "../../src/log/pairing.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import { TokenMeter } from "../../src/log/token-meter.js";
import { sessionLeaseName } from "../../src/store/store.js";
import type { FakeReply, FakeRequest } from "../../testing/fake-provider/index.js";
import { loopFixture, personaPlugin } from "../loop/harness.js";
import { isSummaryRequest } from "./long-session.js";

const SUMMARY = "## Primary Request and Intent\n- do the thing";
const overflow: FakeReply = {
  status: 400,
  body: {
    error: { message: "This model's maximum context length is 1000 tokens", type: "invalid_request_error" },
  },
};
const tool = (id: string): FakeReply => ({ toolCalls: [{ id, name: "work", arguments: {} }] });
const tools = { work: { run: () => ({ text: "result ".repeat(300) }) } };

function ends(events: LogEvent[]) {
  return events
    .filter((e): e is LogEvent<"compaction/end"> => e.type === "compaction/end")
    .map((e) => e.data);
}

describe("C10 overflow recovery", () => {
  it("an overflow prunes, compacts with retain 0 keeping the last unit, and retries once", async () => {
    const replies: FakeReply[] = [tool("a"), tool("b"), overflow, { text: SUMMARY }, { text: "done" }];
    const f = await loopFixture({ script: replies, tools, plugins: [personaPlugin, compactionPlugin()] });
    try {
      await f.agent.followup("go");
      await f.agent.whenIdle();
      const events = await f.events();
      expect(events.at(-2)).toMatchObject({ type: "turn/end", data: { reason: "completed" } });
      expect(ends(events)).toEqual([{ ok: true, replaced: 3 }]);
      expect(events.find((e) => e.type === "compaction/start")?.data).toEqual({ reason: "overflow" });
      // The retry sends system, the checkpoint and the last balanced unit (call b + its result).
      const retry = f.fake.requests[4]!.body?.messages as { role: string; content?: string }[];
      expect(retry.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
      expect(isCheckpointText(String(retry[1]!.content))).toBe(true);
      const summaryCall = f.fake.requests[3]!;
      expect(isSummaryRequest(summaryCall)).toBe(true);
      // C6: the summary call is the failed request's prefix plus the instruction; same tools.
      const failed = f.fake.requests[2]!.body!;
      const asked = summaryCall.body!;
      expect(asked.tools).toEqual(failed.tools);
      const askedMessages = asked.messages as unknown[];
      expect(askedMessages.slice(0, -1)).toEqual(
        (failed.messages as unknown[]).slice(0, askedMessages.length - 1),
      );
      expect(askedMessages.at(-1)).toEqual({ role: "user", content: COMPACTION_INSTRUCTION });
      expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
    } finally {
      await f.close();
    }
  });

  it("retries only once: a second overflow ends the turn with the original error", async () => {
    const replies: FakeReply[] = [tool("a"), tool("b"), overflow, { text: SUMMARY }, overflow];
    const f = await loopFixture({ script: replies, tools, plugins: [personaPlugin, compactionPlugin()] });
    try {
      await f.agent.followup("go");
      await f.agent.whenIdle();
      const events = await f.events();
      expect(events.at(-2)).toMatchObject({
        type: "turn/end",
        data: { reason: "error", error: { code: "CONTEXT_WINDOW_EXCEEDED" } },
      });
      expect(f.fake.requests).toHaveLength(5);
    } finally {
      await f.close();
    }
  });

  it("when nothing can be compacted the original error stands", async () => {
    const f = await loopFixture({ script: [overflow], plugins: [personaPlugin, compactionPlugin()] });
    try {
      await f.agent.followup("go");
      await f.agent.whenIdle();
      const events = await f.events();
      expect(events.at(-2)).toMatchObject({ type: "turn/end", data: { reason: "error" } });
      expect(events.some((e) => e.type === "agent/error" && e.data.message === OVERFLOW_UNRECOVERED)).toBe(
        true,
      );
      expect(f.fake.requests).toHaveLength(1);
    } finally {
      await f.close();
    }
  });
});

describe("C6 summary failures leave the history unchanged", () => {
  const cases: [string, FakeReply, string][] = [
    ["empty output", { text: "" }, SUMMARY_EMPTY],
    ["a max-tokens finish", { text: "## Primary", finish: "length" }, SUMMARY_TRUNCATED],
    ["a summary not smaller than the range", { text: "x".repeat(20_000) }, SUMMARY_NOT_SMALLER],
  ];
  for (const [name, reply, error] of cases) {
    it(`fails on ${name}, logs it and continues the turn`, async () => {
      let work = 0;
      const script = (request: FakeRequest): FakeReply => {
        if (isSummaryRequest(request)) return reply;
        work++;
        return work < 4 ? tool(`c${work}`) : { text: "done" };
      };
      // threshold 0: every step compacts (retain 1 token keeps the last unit).
      const f = await loopFixture({
        script,
        tools,
        plugins: [personaPlugin, compactionPlugin({ thresholdRatio: 1e-9, retainRatio: 1e-9, retries: 0 })],
      });
      try {
        await f.agent.followup("go");
        await f.agent.whenIdle();
        const events = await f.events();
        expect(events.at(-2)).toMatchObject({ type: "turn/end", data: { reason: "completed" } });
        expect(ends(events).length).toBeGreaterThan(0);
        // M20: a summary that arrived and was refused still records its request's tokens.
        const usage =
          error === SUMMARY_EMPTY
            ? {}
            : { usage: expect.objectContaining({ outputTokens: expect.any(Number) }) };
        for (const end of ends(events)) expect(end).toEqual({ ok: false, error, ...usage });
        expect(events.some((e) => e.type === "user/message" && e.data.source === "compact-checkpoint")).toBe(
          false,
        );
        const failures = events.flatMap((e) => (e.type === "agent/error" ? [e.data.message] : []));
        expect(failures).toContain(`step compaction failed: ${error}; continuing the turn`);
      } finally {
        await f.close();
      }
    });
  }
});

describe("C11 manual compaction", () => {
  it("says there is nothing to compact on a fresh session, then compacts an idle one", async () => {
    const f = await loopFixture({
      script: [tool("a"), { text: "first answer" }, { text: SUMMARY }],
      tools,
      plugins: [personaPlugin, compactionPlugin()],
    });
    try {
      await f.agent.setup();
      const service = f.agent.api("compaction")!;
      expect(await service.compactNow()).toEqual({ kind: "nothing", message: NOTHING_TO_COMPACT });
      await f.agent.followup("go");
      await f.agent.whenIdle();
      const outcome = await service.compactNow();
      expect(outcome.kind).toBe("compacted");
      expect(outcome.message).toMatch(/^Compacted 3 history items \(~\d+ tokens\)\.$/);
      const events = await f.events();
      expect(events.find((e) => e.type === "compaction/start")?.data).toEqual({ reason: "manual" });
      // The agent picks the new events up on its next turn.
      f.fake.setScript([{ text: "second answer" }]);
      await f.agent.followup("again");
      await f.agent.whenIdle();
      const sent = f.fake.requests.at(-1)!.body?.messages as { role: string }[];
      expect(sent.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    } finally {
      await f.close();
    }
  });

  it("is busy while the agent holds the session", async () => {
    const f = await loopFixture({ script: [], plugins: [personaPlugin, compactionPlugin()] });
    try {
      await f.agent.setup();
      await f.store.acquireLease(sessionLeaseName(f.sessionId), "someone-else", 10_000);
      expect(await f.agent.api("compaction")!.compactNow()).toEqual({
        kind: "busy",
        message: COMPACTION_BUSY,
      });
    } finally {
      await f.close();
    }
  });
});

describe("C9 stale start", () => {
  it("a start left by a dead process is closed and ignored", async () => {
    const f = await loopFixture({
      script: [tool("a"), { text: "answer" }, { text: SUMMARY }],
      tools,
      plugins: [personaPlugin, compactionPlugin()],
    });
    try {
      await f.agent.followup("go");
      await f.agent.whenIdle();
      const seq = (await f.events()).length;
      await f.store.append(f.sessionId, [{ type: "compaction/start", data: { reason: "pressure" } }], seq);
      const outcome = await f.agent.api("compaction")!.compactNow();
      expect(outcome.kind).toBe("compacted");
      const events = await f.events();
      expect(ends(events)[0]).toMatchObject({ ok: false, error: expect.stringContaining("stale") });
      expect(ends(events)[1]).toMatchObject({ ok: true });
    } finally {
      await f.close();
    }
  });
});

describe("C2 token meter", () => {
  it("anchors on the last reply's usage and adds heuristic deltas for what came after", async () => {
    const f = await loopFixture({
      script: [
        { ...tool("a"), usage: { input: 5000, output: 20 } },
        { text: "done", usage: { input: 6000, output: 10 } },
      ],
      tools,
    });
    try {
      await f.agent.followup("go");
      await f.agent.whenIdle();
      const meter = new TokenMeter();
      const m = meter.measure(f.agent.log);
      expect(m.anchored).toBe(true);
      expect(m.totalTokens).toBe(6010);
      f.agent.log.add({ type: "user/message", data: { text: "x".repeat(400), source: "human" } });
      expect(meter.measure(f.agent.log).totalTokens).toBe(6010 + 4 + 100 + 4);
    } finally {
      await f.close();
    }
  });

  it("falls back to the heuristic when the usage is below it or a new header was logged", async () => {
    const f = await loopFixture({ script: [{ text: "done", usage: { input: 1, output: 1 } }] });
    try {
      await f.agent.followup("go");
      await f.agent.whenIdle();
      const m = new TokenMeter().measure(f.agent.log);
      expect(m.anchored).toBe(false);
      expect(m.totalTokens).toBe(m.surfaceTokens);
    } finally {
      await f.close();
    }
  });
});
