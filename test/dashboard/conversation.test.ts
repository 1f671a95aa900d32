/**
 * Issue 21 item 2: the dashboard's model of a session (web/conversation.ts), pure, on stored event shapes.
 */
import { describe, expect, it } from "vitest";
import type { LogEvent, NewEvent } from "../../src/log/events.js";
import { Conversation } from "../../web/conversation.js";

function log(...events: NewEvent[]): LogEvent[] {
  return events.map(
    (e, i) =>
      ({ sessionId: "s", seq: i + 1, at: "2026-12-05T00:00:00.000Z", turn: 1, step: 1, ...e }) as LogEvent,
  );
}

const base = log(
  { type: "turn/start", data: {} },
  { type: "user/message", data: { text: "clean up", source: "human" } },
  { type: "user/message", data: { text: "cwd: /w", source: "runtime-context" } },
  {
    type: "assistant/message",
    data: {
      provider: "p",
      model: "m",
      finish: "tool-calls",
      usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 0 },
      blocks: [
        { type: "reasoning", text: "think" },
        { type: "text", text: "I will." },
        { type: "tool-call", id: "c1", name: "bash", arguments: '{"command":"rm -rf x"}' },
      ],
    },
  },
  { type: "approval/requested", data: { id: "a1", callId: "c1", tool: "bash", summary: "rm -rf x" } },
  { type: "approval/answered", data: { id: "a1", decision: "allow-once" } },
  { type: "tool/call", data: { callId: "c1", name: "bash", arguments: '{"command":"rm -rf x"}' } },
  { type: "tool/result", data: { callId: "c1", name: "bash", text: "(no output)" } },
  { type: "llm/retry", data: { attempt: 1, delayMs: 500, error: { code: "RATE_LIMITED", message: "429" } } },
  { type: "compaction/start", data: { reason: "pressure" } },
  { type: "compaction/end", data: { ok: true, replaced: 4 } },
  { type: "turn/end", data: { reason: "completed" } },
);

describe("the dashboard's conversation", () => {
  it("turns the log into items: human and runtime messages apart, reasoning, text, one tool card per call", () => {
    const c = new Conversation();
    c.add(base);
    expect(c.items.map((i) => i.kind)).toEqual([
      "turn-start",
      "user",
      "context",
      "reasoning",
      "assistant",
      "tool",
      "approval",
      "retry",
      "compaction",
      "turn-end",
    ]);
    const tool = c.items.find((i) => i.kind === "tool");
    expect(tool?.kind === "tool" && tool.tool).toMatchObject({
      state: "done",
      result: { text: "(no output)", isError: false },
    });
    expect(c.pendingApprovals()).toEqual([]);
    expect(c.usage).toMatchObject({ requests: 1, input: 10, output: 5, cachedInput: 2 });
    expect(c.running).toBe(false);
  });

  it("takes each seq once, whatever a caller repeats, and bumps an item's version when a later event completes it", () => {
    const c = new Conversation();
    c.add(base.slice(0, 5));
    const approval = c.items.find((i) => i.kind === "approval")!;
    expect(c.pendingApprovals().map((a) => a.id)).toEqual(["a1"]);
    expect(c.running).toBe(true);
    c.add(base.slice(0, 7)); // 1–5 again, then 6 and 7
    expect(approval.version).toBe(1);
    expect(c.pendingApprovals()).toEqual([]);
    c.add(base);
    expect(c.seqs).toEqual(base.map((e) => e.seq));
  });

  it("shows streamed text until the step's message is stored", () => {
    const c = new Conversation();
    c.add(base.slice(0, 3));
    c.delta({ type: "text", delta: "I ", turn: 1, step: 1 });
    c.delta({ type: "text", delta: "will.", turn: 1, step: 1 });
    expect(c.live?.text).toBe("I will.");
    c.add(base.slice(3, 4));
    expect(c.live).toBeUndefined();
  });
});
