import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LogEvent, NewEvent } from "../../src/log/events.js";
import { findPairingError } from "../../src/log/pairing.js";
import { SurfaceOpError, SurfaceProjector, surfaceMessagesOf, surfaceOf } from "../../src/log/surface.js";

/** Gives events session id, dense seqs and a time, as the store would. */
class LogBuilder {
  readonly events: LogEvent[] = [];
  private readonly projector = new SurfaceProjector();
  add(event: NewEvent): LogEvent {
    const stored = {
      sessionId: "s1",
      seq: this.events.length + 1,
      at: "2026-12-02T00:00:00.000Z",
      ...event,
    } as LogEvent;
    this.projector.apply(stored);
    this.events.push(stored);
    return stored;
  }
  get nodes() {
    return this.projector.surface;
  }
  get lastSeq() {
    return this.events.length;
  }
}

describe("C1 surface projection", () => {
  it("projects message events in order and skips log-only events", () => {
    const log = new LogBuilder();
    log.add({ type: "session/start", data: { kind: "main" } });
    log.add({ type: "system/message", data: { text: "sys" } });
    log.add({ type: "turn/start", data: {}, turn: 1 });
    log.add({ type: "user/message", data: { text: "hi", source: "human" }, turn: 1 });
    log.add({
      type: "assistant/message",
      data: {
        blocks: [{ type: "tool-call", id: "c1", name: "read", arguments: '{"file_path": "a"}' }],
        provider: "deepseek",
        model: "m",
        finish: "tool-calls",
      },
    });
    log.add({ type: "tool/call", data: { callId: "c1", name: "read", arguments: '{"file_path": "a"}' } });
    log.add({ type: "tool/result", data: { callId: "c1", name: "read", text: "content" } });
    log.add({ type: "turn/end", data: { reason: "completed" } });
    expect(surfaceMessagesOf(log.events).map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(surfaceOf(log.events).map((n) => n.seq)).toEqual([2, 4, 5, 7]);
  });

  it("hides a replaced range and puts the replacement in its place, keeping the raw events", () => {
    const log = new LogBuilder();
    log.add({ type: "system/message", data: { text: "sys" } });
    log.add({ type: "user/message", data: { text: "one", source: "human" } });
    log.add({ type: "user/message", data: { text: "two", source: "human" } });
    log.add({ type: "user/message", data: { text: "three", source: "human" } });
    log.add({
      type: "user/message",
      data: {
        text: "summary",
        source: "compact-checkpoint",
        surfaceOp: { op: "replace", startSeq: 2, endSeq: 3 },
      },
    });
    expect(surfaceMessagesOf(log.events)).toEqual([
      { role: "system", text: "sys" },
      { role: "user", text: "summary" },
      { role: "user", text: "three" },
    ]);
    expect(log.events).toHaveLength(5);
  });

  it("merges an earlier checkpoint into a later replacement (ranges address nodes, not raw seqs)", () => {
    const log = new LogBuilder();
    log.add({ type: "system/message", data: { text: "sys" } });
    log.add({ type: "user/message", data: { text: "a", source: "human" } });
    log.add({ type: "user/message", data: { text: "b", source: "human" } });
    const first = log.add({
      type: "user/message",
      data: {
        text: "s1",
        source: "compact-checkpoint",
        surfaceOp: { op: "replace", startSeq: 2, endSeq: 2 },
      },
    });
    log.add({ type: "user/message", data: { text: "c", source: "human" } });
    log.add({
      type: "user/message",
      data: {
        text: "s2",
        source: "compact-checkpoint",
        surfaceOp: { op: "replace", startSeq: first.seq, endSeq: 3 },
      },
    });
    expect(surfaceMessagesOf(log.events).map((m) => ("text" in m ? m.text : ""))).toEqual(["sys", "s2", "c"]);
  });

  it("replaces node 0 only with a system message", () => {
    const log = new LogBuilder();
    log.add({ type: "system/message", data: { text: "sys" } });
    log.add({ type: "user/message", data: { text: "a", source: "human" } });
    expect(() =>
      log.add({
        type: "user/message",
        data: {
          text: "x",
          source: "compact-checkpoint",
          surfaceOp: { op: "replace", startSeq: 1, endSeq: 2 },
        },
      }),
    ).toThrow(SurfaceOpError);
    log.add({
      type: "system/message",
      data: { text: "sys v2", surfaceOp: { op: "replace", startSeq: 1, endSeq: 1 } },
    });
    expect(surfaceMessagesOf(log.events)[0]).toEqual({ role: "system", text: "sys v2" });
  });

  it("rejects a replacement naming a seq that is not on the surface", () => {
    const log = new LogBuilder();
    log.add({ type: "system/message", data: { text: "sys" } });
    log.add({ type: "turn/start", data: {} });
    expect(() =>
      log.add({
        type: "user/message",
        data: {
          text: "x",
          source: "compact-checkpoint",
          surfaceOp: { op: "replace", startSeq: 2, endSeq: 2 },
        },
      }),
    ).toThrow(/not on the surface/);
  });

  it("C12 a pruned tool result replaces the original in place", () => {
    const log = new LogBuilder();
    log.add({ type: "system/message", data: { text: "sys" } });
    log.add({ type: "user/message", data: { text: "go", source: "human" } });
    log.add({
      type: "assistant/message",
      data: {
        blocks: [{ type: "tool-call", id: "c1", name: "bash", arguments: "{}" }],
        provider: "p",
        model: "m",
        finish: "tool-calls",
      },
    });
    const original = log.add({
      type: "tool/result",
      data: { callId: "c1", name: "bash", text: "x".repeat(100) },
    });
    log.add({ type: "user/message", data: { text: "after", source: "tool-context" } });
    log.add({
      type: "tool/result",
      data: {
        callId: "c1",
        name: "bash",
        text: "pruned",
        surfaceOp: { op: "replace", startSeq: original.seq, endSeq: original.seq },
      },
    });
    const messages = surfaceMessagesOf(log.events);
    expect(messages[3]).toEqual({ role: "tool", callId: "c1", name: "bash", text: "pruned" });
    expect(messages[4]).toEqual({ role: "user", text: "after" });
    expect(findPairingError(messages)).toBeUndefined();
  });
});

// ---- property tests: any valid event sequence projects to a surface that passes the pairing check ----

type Action =
  | { kind: "user"; text: string }
  | { kind: "text"; text: string; interrupted: boolean }
  | { kind: "calls"; count: number; order: number[]; started: boolean[] }
  | { kind: "cancel"; count: number; dispatched: number }
  | { kind: "compact"; from: number; to: number }
  | { kind: "prune"; pick: number }
  | { kind: "rewrite-system" };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant("user" as const), text: fc.string() }),
  fc.record({ kind: fc.constant("text" as const), text: fc.string(), interrupted: fc.boolean() }),
  fc.integer({ min: 1, max: 4 }).chain((count) =>
    fc.record({
      kind: fc.constant("calls" as const),
      count: fc.constant(count),
      order: fc.shuffledSubarray([...Array(count).keys()], { minLength: count, maxLength: count }),
      started: fc.array(fc.boolean(), { minLength: count, maxLength: count }),
    }),
  ),
  fc.integer({ min: 1, max: 4 }).chain((count) =>
    fc.record({
      kind: fc.constant("cancel" as const),
      count: fc.constant(count),
      dispatched: fc.nat(count),
    }),
  ),
  fc.record({ kind: fc.constant("compact" as const), from: fc.nat(), to: fc.nat() }),
  fc.record({ kind: fc.constant("prune" as const), pick: fc.nat() }),
  fc.constant({ kind: "rewrite-system" as const }),
);

let callCounter = 0;

/** Writes the events a well-behaved driver would write for each action (L1, L7, L8, L9, C5, C12, L12). */
function play(actions: Action[]): LogBuilder {
  const log = new LogBuilder();
  log.add({ type: "session/start", data: { kind: "main" } });
  log.add({ type: "system/message", data: { text: "system" } });
  let turn = 0;
  for (const action of actions) {
    switch (action.kind) {
      case "user":
        turn++;
        log.add({ type: "turn/start", data: {}, turn });
        log.add({ type: "user/message", data: { text: action.text, source: "human" }, turn });
        break;
      case "text":
        log.add({ type: "step/start", data: {}, turn, step: 1 });
        log.add({
          type: "assistant/message",
          data: {
            blocks: [
              { type: "reasoning", text: "thinking", field: "reasoning_content" },
              { type: "text", text: action.text },
            ],
            provider: "p",
            model: "m",
            finish: "stop",
            ...(action.interrupted ? { interrupted: true } : {}),
          },
        });
        log.add({ type: "step/end", data: { result: "completed" } });
        log.add({ type: "turn/end", data: { reason: action.interrupted ? "aborted" : "completed" } });
        break;
      case "calls":
      case "cancel": {
        const ids = Array.from({ length: action.count }, () => `call-${++callCounter}`);
        log.add({
          type: "assistant/message",
          data: {
            blocks: ids.map((id) => ({ type: "tool-call" as const, id, name: "t", arguments: "{}" })),
            provider: "p",
            model: "m",
            finish: "tool-calls",
          },
        });
        if (action.kind === "calls") {
          for (const index of action.order) {
            const id = ids[index]!;
            if (action.started[index])
              log.add({ type: "tool/call", data: { callId: id, name: "t", arguments: "{}" } });
            log.add({ type: "tool/result", data: { callId: id, name: "t", text: "r".repeat(index * 3000) } });
          }
        } else {
          ids.forEach((id, index) => {
            const dispatched = index < action.dispatched;
            log.add({
              type: "tool/call",
              data: { callId: id, name: "t", arguments: "{}", synthetic: !dispatched },
            });
            log.add({
              type: "tool/result",
              data: {
                callId: id,
                name: "t",
                text: dispatched ? "Error: tool call aborted" : "Error: tool call aborted before dispatch",
                isError: true,
                synthetic: !dispatched,
              },
            });
          });
          log.add({ type: "turn/end", data: { reason: "aborted" } });
        }
        break;
      }
      case "compact": {
        // C5: a range after node 0 that never splits a call from its results: starts and ends at unit boundaries.
        const nodes = log.nodes;
        const starts = nodes.map((_n, i) => i).filter((i) => i >= 1 && nodes[i]!.message.role !== "tool");
        const ends = nodes
          .map((_n, i) => i)
          .filter((i) => i >= 1 && (i === nodes.length - 1 || nodes[i + 1]!.message.role !== "tool"));
        if (starts.length === 0) break;
        const from = starts[action.from % starts.length]!;
        const validEnds = ends.filter((i) => i >= from);
        if (validEnds.length === 0) break;
        const to = validEnds[action.to % validEnds.length]!;
        log.add({ type: "compaction/start", data: { reason: "pressure" } });
        log.add({
          type: "user/message",
          data: {
            text: "checkpoint",
            source: "compact-checkpoint",
            surfaceOp: { op: "replace", startSeq: nodes[from]!.seq, endSeq: nodes[to]!.seq },
          },
        });
        log.add({ type: "compaction/end", data: { ok: true } });
        break;
      }
      case "prune": {
        const results = log.nodes.filter((n) => n.message.role === "tool");
        const target = results[action.pick % Math.max(1, results.length)];
        if (target?.message.role !== "tool") break;
        log.add({
          type: "tool/result",
          data: {
            callId: target.message.callId,
            name: target.message.name,
            text: "pruned",
            surfaceOp: { op: "replace", startSeq: target.seq, endSeq: target.seq },
          },
        });
        break;
      }
      case "rewrite-system":
        log.add({
          type: "system/message",
          data: {
            text: "system v2",
            surfaceOp: { op: "replace", startSeq: log.nodes[0]!.seq, endSeq: log.nodes[0]!.seq },
          },
        });
        break;
    }
  }
  return log;
}

describe("C1 + M8 property: valid logs project to valid surfaces", () => {
  it("any valid event sequence projects to a surface that passes the pairing check", () => {
    fc.assert(
      fc.property(fc.array(actionArb, { maxLength: 60 }), (actions) => {
        const log = play(actions);
        const messages = surfaceMessagesOf(log.events);
        expect(findPairingError(messages)).toBeUndefined();
        expect(messages[0]?.role).toBe("system");
      }),
      { numRuns: 300 },
    );
  });

  it("the projection is a pure function: incremental and one-shot agree on every prefix", () => {
    fc.assert(
      fc.property(fc.array(actionArb, { maxLength: 30 }), (actions) => {
        const log = play(actions);
        const projector = new SurfaceProjector();
        log.events.forEach((event, i) => {
          projector.apply(event);
          expect(projector.surface).toEqual(surfaceOf(log.events.slice(0, i + 1)));
        });
      }),
      { numRuns: 100 },
    );
  });

  it("dropping a result from a valid log is always caught by the pairing check", () => {
    fc.assert(
      fc.property(fc.array(actionArb, { maxLength: 40 }), fc.nat(), (actions, pick) => {
        const log = play([...actions, { kind: "calls", count: 1, order: [0], started: [true] }]);
        const visible = surfaceOf(log.events).filter((n) => n.message.role === "tool");
        const victim = visible[pick % visible.length]!.message;
        const callId = victim.role === "tool" ? victim.callId : "";
        const withoutResult = log.events.filter(
          (e) => !(e.type === "tool/result" && e.data.callId === callId),
        );
        const messages = surfaceMessagesOf(withoutResult);
        expect(findPairingError(messages)).toBeDefined();
      }),
      { numRuns: 200 },
    );
  });
});
