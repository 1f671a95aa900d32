/**
 * The transcript projection (src/transcript/projection.ts): one model for every view, whatever the chunks.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { usageOf } from "../../src/log/usage.js";
import { nudgeLabel } from "../../src/transcript/labels.js";
import { projectTranscript, Transcript } from "../../src/transcript/projection.js";
import { prng, sessionScript } from "./session-script.js";

/** Everything a view reads from a projection, as plain data. */
function snapshot(t: Transcript) {
  return JSON.parse(
    JSON.stringify({
      items: t.items,
      usage: t.usage,
      running: t.running,
      status: t.status,
      title: t.title,
      goal: t.goal,
      approvals: [...t.approvals.values()],
      questions: [...t.questions.values()],
      children: [...t.children.values()],
      lastSeq: t.lastSeq,
    }),
  );
}

function inChunks(events: readonly LogEvent[], seed: number): Transcript {
  const random = prng(seed);
  const t = new Transcript();
  let i = 0;
  while (i < events.length) {
    const size = 1 + Math.floor(random() * 40);
    // A view may replay a batch it had (a reconnect): the overlap is skipped.
    const from = Math.max(0, i - Math.floor(random() * 3));
    t.add(events.slice(from, i + size));
    i += size;
  }
  return t;
}

describe("transcript projection", () => {
  it("all at once, in random chunks (with replays) and after a reopen give the same items, keys and usage", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        (seed, split) => {
          const events = sessionScript(seed, { maxCalls: 10 });
          const whole = projectTranscript(events);
          const chunked = inChunks(events, split);
          const reopened = projectTranscript(JSON.parse(JSON.stringify(events)) as LogEvent[]);
          expect(snapshot(chunked)).toEqual(snapshot(whole));
          expect(snapshot(reopened)).toEqual(snapshot(whole));
          const keys = whole.items.map((item) => item.key);
          expect(new Set(keys).size).toBe(keys.length);
          expect(whole.usage).toEqual(usageOf(events).session);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("gives each of ten parallel calls in one message its own item and key", () => {
    const events = sessionScript(7, { turns: 1 });
    const t = projectTranscript(events);
    const at = (seq: number) => t.items.filter((i) => i.seq === seq).map((i) => i.key);
    const message = events.find((e) => e.type === "assistant/message" && e.data.blocks.length > 2);
    if (message) expect(new Set(at(message.seq)).size).toBe(at(message.seq).length);
    const many = manyCalls(10);
    const tools = projectTranscript(many).items.filter((i) => i.kind === "tool");
    expect(tools).toHaveLength(10);
    expect(new Set(tools.map((i) => i.key)).size).toBe(10);
    expect(tools.every((i) => i.kind === "tool" && i.tool.state === "done")).toBe(true);
  });

  it("S3 and §9: settles a child from the parent's own log and shows a nudge for what it is", () => {
    const at = "2026-12-01T10:00:00.000Z";
    const events: LogEvent[] = [
      { sessionId: "p", seq: 1, at, type: "turn/start", turn: 1, data: {} },
      {
        sessionId: "p",
        seq: 2,
        at,
        type: "subagent/started",
        turn: 1,
        data: { childId: "c1", mode: "spawn", task: "look" },
      },
      {
        sessionId: "p",
        seq: 3,
        at,
        type: "user/message",
        turn: 1,
        step: 2,
        data: {
          text: "c1 done",
          source: "subagent-settled",
          about: { kind: "subagent-settled", childId: "c1", reason: "completed" },
        },
      },
      {
        sessionId: "p",
        seq: 4,
        at,
        type: "user/message",
        turn: 1,
        step: 3,
        data: {
          text: "keep going",
          source: "continuation",
          about: { kind: "continuation", check: "open-todos", openTodos: 2 },
        },
      },
    ];
    const t = new Transcript();
    const first = t.add(events.slice(0, 2));
    expect(first.map((c) => c.change)).toEqual(["added", "added"]);
    const changes = t.add(events.slice(2));
    const child = t.items.find((i) => i.kind === "subagent");
    expect(child?.kind === "subagent" && child.child.state).toBe("completed");
    expect(changes.some((c) => c.item === child && c.change === "updated")).toBe(true);
    const nudge = t.items.find((i) => i.kind === "nudge");
    expect(nudge?.kind === "nudge" && nudgeLabel(nudge.about)).toBe(
      "asked the model to continue: 2 todos open",
    );
  });

  it("keeps live deltas apart from the items until the message is stored", () => {
    const t = new Transcript();
    t.delta({ type: "text", delta: "He", turn: 1, step: 1 });
    t.resumeLive({ turn: 1, step: 1, text: "Hel", reasoning: "" }); // a reconnect: the server's copy wins
    t.delta({ type: "text", delta: "lo", turn: 1, step: 1 });
    expect(t.live?.text).toBe("Hello");
    expect(t.items).toHaveLength(0);
    t.add([
      {
        sessionId: "s",
        seq: 1,
        at: "2026-12-01T10:00:00.000Z",
        type: "assistant/message",
        turn: 1,
        step: 1,
        data: { blocks: [{ type: "text", text: "Hello" }], provider: "p", model: "m", finish: "stop" },
      },
    ]);
    expect(t.live).toBeUndefined();
    t.resumeLive({ turn: 1, step: 1, text: "Hel", reasoning: "" }); // stale: its message is stored
    expect(t.live).toBeUndefined();
    const fresh = new Transcript();
    fresh.resumeLive({ turn: 2, step: 1, text: "partial repl", reasoning: "hm" });
    fresh.delta({ type: "text", delta: "y", turn: 2, step: 1 });
    expect(fresh.live?.text).toBe("partial reply");
  });
});

function manyCalls(n: number): LogEvent[] {
  const at = "2026-12-01T10:00:00.000Z";
  const ids = Array.from({ length: n }, (_, i) => `c${i}`);
  const events: LogEvent[] = [
    {
      sessionId: "s",
      seq: 1,
      at,
      type: "assistant/message",
      turn: 1,
      step: 1,
      data: {
        blocks: ids.map((id) => ({ type: "tool-call" as const, id, name: "read", arguments: "{}" })),
        provider: "p",
        model: "m",
        finish: "tool-calls",
      },
    },
  ];
  for (const id of ids)
    events.push({
      sessionId: "s",
      seq: events.length + 1,
      at,
      type: "tool/result",
      turn: 1,
      step: 1,
      data: { callId: id, name: "read", text: "x" },
    });
  return events;
}
