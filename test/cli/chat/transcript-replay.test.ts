/**
 * Chat shows a reopened session as it showed it live: the same lines from the same events, because both go
 * through the shared transcript (src/transcript/) and one terminal renderer (render/item-lines.ts). Live,
 * the replies arrive as deltas before their stored message; reopened (`--continue`, `/resume`), only the
 * stored events arrive.
 */
import { describe, expect, it } from "vitest";
import { ChatScreen } from "../../../src/cli/chat/chat-screen.js";
import { PLAIN } from "../../../src/cli/render/style.js";
import { RunView } from "../../../src/cli/run-view.js";
import type { LogEvent } from "../../../src/log/events.js";
import { usageOf } from "../../../src/log/usage.js";
import { projectTranscript } from "../../../src/transcript/projection.js";
import { sessionScript } from "../../transcript/session-script.js";

const at = (seq: number) => new Date(Date.parse("2026-12-01T10:00:00.000Z") + seq * 700).toISOString();

/** A session a person had: a question, a reply with reasoning and two parallel reads, a nudge, the answer. */
function fixture(): LogEvent[] {
  const raw: Omit<LogEvent, "seq" | "at" | "sessionId">[] = [
    { type: "session/start", data: { kind: "main" } },
    { type: "turn/start", turn: 1, data: {} },
    { type: "step/start", turn: 1, step: 1, data: {} },
    { type: "user/message", turn: 1, step: 1, data: { text: "What is in the notes?", source: "human" } },
    {
      type: "assistant/message",
      turn: 1,
      step: 1,
      data: {
        provider: "p",
        model: "m",
        finish: "tool-calls",
        usage: { inputTokens: 1200, outputTokens: 80, cacheReadTokens: 300, cacheWriteTokens: 0 },
        blocks: [
          { type: "reasoning", text: "Two files.\nRead both." },
          { type: "text", text: "I will read **both** files." },
          { type: "tool-call", id: "c1", name: "read", arguments: '{"file_path":"a.txt"}' },
          { type: "tool-call", id: "c2", name: "read", arguments: '{"file_path":"b.txt"}' },
        ],
      },
    },
    {
      type: "tool/call",
      turn: 1,
      step: 1,
      data: { callId: "c1", name: "read", arguments: '{"file_path":"a.txt"}' },
    },
    {
      type: "tool/call",
      turn: 1,
      step: 1,
      data: { callId: "c2", name: "read", arguments: '{"file_path":"b.txt"}' },
    },
    {
      type: "tool/result",
      turn: 1,
      step: 1,
      data: { callId: "c2", name: "read", text: "1\tbee\n", durationMs: 3 },
    },
    {
      type: "tool/result",
      turn: 1,
      step: 1,
      data: { callId: "c1", name: "read", text: "1\tant\n", durationMs: 4 },
    },
    { type: "step/end", turn: 1, step: 1, data: { result: "continue" } },
    { type: "step/start", turn: 1, step: 2, data: {} },
    {
      type: "assistant/message",
      turn: 1,
      step: 2,
      data: {
        provider: "p",
        model: "m",
        finish: "stop",
        usage: { inputTokens: 1500, outputTokens: 40, cacheReadTokens: 900, cacheWriteTokens: 0 },
        blocks: [{ type: "text", text: "Next I will summarise them." }],
      },
    },
    {
      type: "user/message",
      turn: 1,
      step: 3,
      data: {
        text: "You said what you would do next…",
        source: "continuation",
        about: { kind: "continuation", check: "announced-action" },
      },
    },
    { type: "step/start", turn: 1, step: 3, data: {} },
    {
      type: "assistant/message",
      turn: 1,
      step: 3,
      data: {
        provider: "p",
        model: "m",
        finish: "stop",
        usage: { inputTokens: 1600, outputTokens: 30, cacheReadTokens: 1000, cacheWriteTokens: 0 },
        blocks: [{ type: "text", text: "The notes hold:\n\n- ant\n- bee\n" }],
      },
    },
    { type: "turn/end", turn: 1, data: { reason: "completed" } },
  ];
  return raw.map((e, i) => ({ ...e, seq: i + 1, at: at(i + 1), sessionId: "s" }) as LogEvent);
}

function lines(screen: ChatScreen): string[] {
  return screen.transcript.map((line) => line.text);
}

/** Live: each reply streamed as deltas (in small pieces) before its stored message. */
function live(events: readonly LogEvent[]): ChatScreen {
  const screen = new ChatScreen(PLAIN, 80, () => undefined);
  for (const event of events) {
    if (event.type === "user/message" && event.data.source === "human")
      screen.userMessage(event.data.text, false);
    if (event.type === "assistant/message") {
      for (const block of event.data.blocks) {
        if (block.type !== "text" && block.type !== "reasoning") continue;
        for (let i = 0; i < block.text.length; i += 5) screen.delta(block.type, block.text.slice(i, i + 5));
      }
    }
    screen.events([event]);
  }
  return screen;
}

describe("chat: a reopened session looks as it did live", () => {
  it("the fixture session: same lines, assistant text included, same totals as sessions show", () => {
    const events = fixture();
    const watched = live(events);
    const reopened = new ChatScreen(PLAIN, 80, () => undefined);
    reopened.events(events);
    expect(lines(reopened)).toEqual(lines(watched));
    const text = lines(reopened).join("\n");
    expect(text).toContain("I will read both files.");
    expect(text).toContain("The notes hold:");
    expect(text).toContain("↻ asked the model to continue: the reply announced a step it did not take");
    expect(text.match(/✓ read/g)).toHaveLength(2);
    const stored = usageOf(events).session;
    expect(reopened.usage).toEqual(stored);
    expect(reopened.usageLine()).toBe(watched.usageLine());
    expect(reopened.usageLine()).toContain("3 requests");
  });

  it("the fixture session in all three views: run's cards and notices are chat's lines; the dashboard's items the same", () => {
    const events = fixture();
    const chat = new ChatScreen(PLAIN, 80, () => undefined);
    chat.events(events);
    const sink = (isTTY: boolean) => {
      const out = { text: "", write: (t: string) => (out.text += t), isTTY, columns: 80 };
      return out;
    };
    // stdout a terminal: the replies stay there (piped, narration would join the work on stderr).
    const stdout = sink(true);
    const stderr = sink(false);
    const run = new RunView({ stdout, stderr, env: { NO_COLOR: "1" } });
    run.events(events);
    run.finish();
    const work = stderr.text.trimEnd().split("\n");
    // Everything `run` prints about the work (cards, the nudge) chat prints too, in the same order.
    const chatLines = lines(chat);
    let at = 0;
    for (const line of work) {
      at = chatLines.indexOf(line, at);
      expect(at, `run's line ${JSON.stringify(line)} in chat`).toBeGreaterThanOrEqual(0);
    }
    expect(work.some((line) => line.startsWith("✓ read a.txt"))).toBe(true);
    expect(work).toContain("↻ asked the model to continue: the reply announced a step it did not take");
    expect(run.totals).toEqual(usageOf(events).session);
    // The dashboard draws the same projection: its tool items, in order, are the calls chat showed.
    const items = projectTranscript(events).items;
    expect(
      items.filter((i) => i.kind === "tool").map((i) => (i.kind === "tool" ? i.tool.callId : "")),
    ).toEqual(["c1", "c2"]);
    expect(
      items.filter((i) => i.kind === "assistant").map((i) => (i.kind === "assistant" ? i.text : "")),
    ).toEqual([
      "I will read **both** files.",
      "Next I will summarise them.",
      "The notes hold:\n\n- ant\n- bee\n",
    ]);
  });

  it("replaying the same events again (/model reattaches to the session) adds nothing and counts nothing twice", () => {
    const events = fixture();
    const screen = new ChatScreen(PLAIN, 80, () => undefined);
    screen.events(events);
    const before = lines(screen);
    const usage = screen.usage;
    screen.events(events);
    expect(lines(screen)).toEqual(before);
    expect(screen.usage).toEqual(usage);
  });

  it.each([3, 11, 29])("random session %i: every stored reply's text is on the reopened screen", (seed) => {
    const events = sessionScript(seed, { maxCalls: 3 });
    const screen = new ChatScreen(PLAIN, 120, () => undefined);
    screen.events(events);
    const shown = lines(screen).join("\n");
    for (const event of events) {
      if (event.type !== "assistant/message" || event.data.interrupted) continue;
      for (const block of event.data.blocks) if (block.type === "text") expect(shown).toContain(block.text);
    }
    expect(screen.usage).toEqual(usageOf(events).session);
  });
});
