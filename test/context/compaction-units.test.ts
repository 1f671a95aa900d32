import { describe, expect, it } from "vitest";
import { compactionBudget } from "../../src/context/compaction/budget.js";
import {
  type CompactionLog,
  PRUNE_HEAD,
  PRUNE_TAIL,
  prunedText,
  pruneToolResults,
} from "../../src/context/compaction/pruner.js";
import { selectRange } from "../../src/context/compaction/range.js";
import { taskStateText } from "../../src/context/compaction/reinjection.js";
import { PRUNE_MARKER } from "../../src/context/compaction/texts.js";
import type { LogEvent, NewEvent } from "../../src/log/events.js";
import type { SurfaceMessage, SurfaceNode } from "../../src/log/messages.js";
import { findPairingError } from "../../src/log/pairing.js";
import { SurfaceProjector } from "../../src/log/surface.js";
import { todosFromLog } from "../../src/tools/todo/todos-from-log.js";

const sys: SurfaceMessage = { role: "system", text: "system" };
const user = (text: string): SurfaceMessage => ({ role: "user", text });
const calls = (...ids: string[]): SurfaceMessage => ({
  role: "assistant",
  blocks: ids.map((id) => ({ type: "tool-call" as const, id, name: "t", arguments: "{}" })),
});
const result = (id: string): SurfaceMessage => ({ role: "tool", callId: id, name: "t", text: "ok" });
const say = (text: string): SurfaceMessage => ({ role: "assistant", blocks: [{ type: "text", text }] });
const nodesOf = (...messages: SurfaceMessage[]): SurfaceNode[] =>
  messages.map((message, i) => ({ seq: i + 1, message }));
const unit = () => 10;

/** The tail after the cut must pass the pairing check on its own (no call separated from its result). */
function tailIsBalanced(nodes: SurfaceNode[], end: number): boolean {
  return findPairingError(nodes.slice(end + 1).map((n) => n.message)) === undefined;
}

describe("C4 threshold and C5 retain arithmetic", () => {
  it("W = 1,048,576 and O = 256,000 give threshold 727,040 and retain 126,812", () => {
    expect(compactionBudget(1_048_576, 256_000)).toEqual({ threshold: 727_040, retain: 126_812 });
  });
  it("takes W × 0.8 when the headroom rule is looser", () => {
    expect(compactionBudget(1_000_000, 0)).toEqual({ threshold: 800_000, retain: 160_000 });
  });
  it("follows the configured ratios and headroom", () => {
    expect(
      compactionBudget(40_000, 4_000, { thresholdRatio: 0.8, headroomTokens: 2_000, retainRatio: 0.16 }),
    ).toEqual({ threshold: 32_000, retain: 5_760 });
  });
});

describe("C5 balanced cut", () => {
  it("keeps the newest nodes worth at least the retain budget and never takes node 0", () => {
    const nodes = nodesOf(sys, user("a"), say("b"), user("c"), say("d"));
    const range = selectRange(nodes, 20, unit);
    expect(range).toMatchObject({ start: 1, end: 2, startSeq: 2, endSeq: 3, tailTokens: 20 });
  });

  it("moves the cut before a tool call whose result would be kept", () => {
    const nodes = nodesOf(sys, user("go"), calls("a"), result("a"), calls("b"), result("b"), say("done"));
    const range = selectRange(nodes, 20, unit)!;
    expect(range.end).toBe(3); // tail = [calls b, result b, done]
    expect(tailIsBalanced(nodes, range.end)).toBe(true);
  });

  it("keeps parallel calls together with all their results", () => {
    const nodes = nodesOf(
      sys,
      user("go"),
      say("x"),
      calls("a", "b", "c"),
      result("a"),
      result("b"),
      result("c"),
    );
    const range = selectRange(nodes, 10, unit)!;
    expect(range.end).toBe(2);
    expect(tailIsBalanced(nodes, range.end)).toBe(true);
  });

  it("keeps interleaved (out-of-order) results with their calls", () => {
    const nodes = nodesOf(
      sys,
      user("go"),
      calls("a", "b"),
      result("b"),
      result("a"),
      calls("c", "d"),
      result("d"),
      result("c"),
    );
    for (let retain = 0; retain <= 70; retain += 10) {
      const range = selectRange(nodes, retain, unit);
      if (range) expect(tailIsBalanced(nodes, range.end)).toBe(true);
    }
  });

  it("a retain of 0 keeps only the last balanced unit", () => {
    const nodes = nodesOf(
      sys,
      user("go"),
      calls("a"),
      result("a"),
      calls("b", "c"),
      result("c"),
      result("b"),
    );
    expect(selectRange(nodes, 0, unit)).toMatchObject({ start: 1, end: 3 });
  });

  it("finds nothing when no balanced cut leaves a range", () => {
    const nodes = nodesOf(sys, calls("a"), result("a"));
    expect(selectRange(nodes, 0, unit)).toBeUndefined();
    expect(selectRange(nodesOf(sys, user("only")), 0, unit)).toBeUndefined();
  });

  it("does not summarise a range that is only an earlier checkpoint", () => {
    const nodes = nodesOf(sys, user("CHECKPOINT"), say("x"));
    expect(selectRange(nodes, 0, unit, (n) => n.message.role === "user")).toBeUndefined();
  });

  it("every cut over a random tool-heavy history leaves a balanced tail", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const messages: SurfaceMessage[] = [sys, user("go")];
    let id = 0;
    for (let i = 0; i < 200; i++) {
      const n = Math.floor(random() * 4);
      if (n === 0) messages.push(random() < 0.5 ? say("t") : user("u"));
      else {
        const ids = Array.from({ length: n }, () => `c${id++}`);
        messages.push(calls(...ids));
        for (const callId of ids.sort(() => random() - 0.5)) messages.push(result(callId));
      }
    }
    const nodes = nodesOf(...messages);
    for (let retain = 0; retain < 3000; retain += 37) {
      const range = selectRange(nodes, retain, () => 1 + Math.floor(random() * 20));
      expect(range).toBeDefined();
      expect(tailIsBalanced(nodes, range!.end)).toBe(true);
      expect(range!.start).toBe(1);
    }
  });
});

function memoryLog(messages: NewEvent[]): CompactionLog & { all: LogEvent[] } {
  const all: LogEvent[] = [];
  const surface = new SurfaceProjector();
  const log = {
    sessionId: "s",
    all,
    events: all,
    surface,
    get seq() {
      return all.length;
    },
    add(...events: NewEvent[]) {
      return events.map((e) => {
        const event = { ...e, sessionId: "s", seq: all.length + 1, at: "" } as LogEvent;
        all.push(event);
        surface.apply(event);
        return event;
      });
    },
    flush: async () => undefined,
  };
  log.add(...messages);
  return log;
}

describe("C12 tool-result pruner", () => {
  it("keeps the first 4096 and the last 1024 code points around the marker", () => {
    const text = "😀".repeat(9000);
    const pruned = prunedText(text)!;
    expect(pruned).toBe("😀".repeat(PRUNE_HEAD) + PRUNE_MARKER + "😀".repeat(PRUNE_TAIL));
    expect(prunedText("x".repeat(8192))).toBeUndefined();
  });

  it("appends compaction/prune and a same-call-id replacement; pairing is unchanged", () => {
    const big = `${"a".repeat(5000)}${"b".repeat(5000)}`;
    const log = memoryLog([
      { type: "system/message", data: { text: "s" } },
      {
        type: "assistant/message",
        data: {
          blocks: [{ type: "tool-call", id: "c1", name: "read", arguments: "{}" }],
          provider: "p",
          model: "m",
          finish: "tool-calls",
        },
      },
      { type: "tool/result", data: { callId: "c1", name: "read", text: big } },
    ]);
    expect(pruneToolResults(log)).toBe(1);
    expect(log.all.map((e) => e.type).slice(3)).toEqual(["compaction/prune", "tool/result"]);
    const replacement = log.all[4] as LogEvent<"tool/result">;
    expect(replacement.data).toMatchObject({
      callId: "c1",
      surfaceOp: { op: "replace", startSeq: 3, endSeq: 3 },
    });
    const messages = log.surface.messages();
    expect(messages).toHaveLength(3);
    expect(findPairingError(messages)).toBeUndefined();
    expect(pruneToolResults(log)).toBe(0); // idempotent
  });
});

describe("after compaction: task state re-injection (beyond DSH)", () => {
  it("reads the newest successful todo_write from the log and the active goal", () => {
    const log = memoryLog([
      {
        type: "tool/call",
        data: {
          callId: "1",
          name: "todo_write",
          arguments: JSON.stringify({ todos: [{ content: "old", status: "pending" }] }),
        },
      },
      {
        type: "tool/call",
        data: {
          callId: "2",
          name: "todo_write",
          arguments: JSON.stringify({ todos: [{ content: "new", status: "in_progress" }] }),
        },
      },
      {
        type: "tool/call",
        data: {
          callId: "3",
          name: "todo_write",
          arguments: JSON.stringify({ todos: [{ content: "", status: "x" }] }),
        },
      },
      { type: "tool/result", data: { callId: "3", name: "todo_write", text: "Error: empty", isError: true } },
    ]);
    const todos = todosFromLog(log.all);
    expect(todos).toEqual([{ content: "new", status: "in_progress" }]);
    const text = taskStateText(todos, { objective: "ship it", phase: "active" })!;
    expect(text).toContain("Active goal (active): ship it");
    expect(text).toContain("- [in_progress] new");
    expect(text.startsWith("<system-reminder>")).toBe(true);
    expect(taskStateText(undefined, undefined)).toBeUndefined();
  });
});
