import { afterEach, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { findPairingError } from "../../src/log/pairing.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import type { Plugin } from "../../src/loop/plugin.js";
import {
  ABORTED_BEFORE_DISPATCH_TEXT,
  NOT_STARTED_TEXT,
  OUTCOME_UNKNOWN_TEXT,
} from "../../src/loop/recovery.js";
import type { Store } from "../../src/store/store.js";
import { type LoopFixture, loopFixture, personaPlugin, types } from "./harness.js";

let fixture: LoopFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

function ofType<K extends LogEvent["type"]>(events: LogEvent[], type: K): Extract<LogEvent, { type: K }>[] {
  return events.filter((e): e is Extract<LogEvent, { type: K }> => e.type === type);
}

function turnEnds(events: LogEvent[]) {
  return ofType(events, "turn/end").map((e) => e.data.reason);
}

/** A deferred promise, to hold a tool or a reply until the test says so. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("L4 inbox and L6 queued follow-ups", () => {
  it("a steer sent while a tool runs joins the same turn at the next step", async () => {
    const toolStarted = deferred();
    const release = deferred();
    fixture = await loopFixture({
      script: [{ toolCalls: [{ id: "c1", name: "slow", arguments: {} }] }, { text: "saw the steer" }],
      tools: {
        slow: {
          run: async () => {
            toolStarted.resolve();
            await release.promise;
            return { text: "slow done" };
          },
        },
      },
    });
    await fixture.agent.followup("start");
    await toolStarted.promise;
    await fixture.agent.steer("also check the README");
    release.resolve();
    await fixture.agent.whenIdle();
    const events = await fixture.events();
    expect(ofType(events, "turn/start")).toHaveLength(1);
    const users = ofType(events, "user/message").map((e) => e.data.text);
    expect(users).toEqual(["start", "also check the README"]);
    const second = fixture.fake.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(second.messages.at(-1)).toMatchObject({ role: "user", content: "also check the README" });
  });

  it("a steer arriving as the step ends keeps the turn open instead of ending it (L1)", async () => {
    const firstRequest = deferred();
    const release = deferred();
    fixture = await loopFixture({
      script: async (_request, index) => {
        if (index === 0) {
          firstRequest.resolve();
          await release.promise;
          return { text: "I will stop here." };
        }
        return { text: "continued" };
      },
    });
    await fixture.agent.followup("go");
    await firstRequest.promise;
    await fixture.agent.steer("wait, one more thing");
    release.resolve();
    await fixture.agent.whenIdle();
    const events = await fixture.events();
    expect(ofType(events, "turn/start")).toHaveLength(1);
    expect(ofType(events, "step/start")).toHaveLength(2);
    expect(turnEnds(events)).toEqual(["completed"]);
  });

  it("follow-ups queued during a turn open the next turns without going idle (L6)", async () => {
    const firstRequest = deferred();
    const release = deferred();
    fixture = await loopFixture({
      script: async (_request, index) => {
        if (index === 0) {
          firstRequest.resolve();
          await release.promise;
        }
        return { text: `reply ${index}` };
      },
    });
    await fixture.agent.followup("one");
    await firstRequest.promise;
    await fixture.agent.followup("two");
    await fixture.agent.followup("three");
    release.resolve();
    await fixture.agent.whenIdle();
    const events = await fixture.events();
    expect(turnEnds(events)).toEqual(["completed", "completed", "completed"]);
    const statuses = ofType(events, "agent/status").map((e) => e.data.status);
    expect(statuses).toEqual(["running", "idle"]);
    const spliced = ofType(events, "agent/inbox/spliced");
    expect(spliced.map((e) => e.data.items[0]?.text)).toEqual(["one", "two", "three"]);
  });

  it("inject does not wake an idle agent; it rides along with the next turn", async () => {
    fixture = await loopFixture({ script: [{ text: "ok" }] });
    await fixture.agent.inject("background note");
    await fixture.agent.whenIdle();
    expect(await fixture.events()).toEqual([]);
    await fixture.agent.followup("now go");
    await fixture.agent.whenIdle();
    const users = ofType(await fixture.events(), "user/message").map((e) => e.data.text);
    expect(users.sort()).toEqual(["background note", "now go"]);
  });
});

describe("L5 agent/turn-stopping", () => {
  it("a listener that injects keeps the turn open for another step", async () => {
    const nudge: Plugin = {
      name: "nudge-once",
      setup(ctx) {
        ctx.hooks.onSerial("agent/turn-stopping", (event) => {
          if (event.keptOpen === 0) event.inject({ text: "keep going", source: "continuation" });
        });
      },
    };
    fixture = await loopFixture({
      script: [{ text: "Now I'll run the tests." }, { text: "Tests pass." }],
      plugins: [personaPlugin, nudge],
    });
    await fixture.agent.followup("fix it");
    await fixture.agent.whenIdle();
    const events = await fixture.events();
    expect(ofType(events, "turn/start")).toHaveLength(1);
    expect(ofType(events, "step/start")).toHaveLength(2);
    expect(ofType(events, "user/message").map((e) => e.data.source)).toEqual(["human", "continuation"]);
  });
});

describe("L7 L8 cancellation", () => {
  it("keeps the streamed text prefix as an interrupted message and ends the turn aborted", async () => {
    fixture = await loopFixture({
      script: [
        { text: "partial answer that goes on", fault: { kind: "stall", afterFrames: 3 } },
        { text: "next" },
      ],
    });
    const agent = fixture.agent;
    const gotText = deferred();
    agent.onDelta((d) => {
      if (d.type === "text") gotText.resolve();
    });
    await agent.followup("talk");
    await gotText.promise;
    await agent.cancel();
    await agent.whenIdle();
    const events = await fixture.events();
    const message = ofType(events, "assistant/message")[0]!;
    expect(message.data.interrupted).toBe(true);
    expect(message.data.blocks[0]).toMatchObject({ type: "text" });
    expect(turnEnds(events)).toEqual(["aborted"]);
    expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
  });

  it("closes undispatched calls with the aborted-before-dispatch pair; a started call ends aborted", async () => {
    const started = deferred();
    fixture = await loopFixture({
      script: [
        {
          toolCalls: [
            { id: "a", name: "block", arguments: {} },
            { id: "b", name: "block", arguments: {} },
          ],
        },
      ],
      tools: {
        block: {
          run: (_args, exec) =>
            new Promise((resolve) => {
              started.resolve();
              exec.signal.addEventListener("abort", () =>
                resolve({ text: "Error: tool call aborted", isError: true }),
              );
            }),
        },
      },
    });
    await fixture.agent.followup("go");
    await started.promise;
    await fixture.agent.cancel();
    await fixture.agent.whenIdle();
    const events = await fixture.events();
    const results = ofType(events, "tool/result");
    expect(results.map((r) => [r.data.callId, r.data.text])).toEqual([
      ["a", "Error: tool call aborted"],
      ["b", ABORTED_BEFORE_DISPATCH_TEXT],
    ]);
    expect(results[1]!.data.code).toBe("ABORTED_BEFORE_DISPATCH");
    expect(ofType(events, "tool/call").map((e) => [e.data.callId, e.data.synthetic ?? false])).toEqual([
      ["a", false],
      ["b", true],
    ]);
    expect(turnEnds(events)).toEqual(["aborted"]);
    expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
  });
});

describe("L9 failed step", () => {
  it("closes a started call as outcome unknown and an unstarted one as not started", async () => {
    const running = deferred();
    let classified = 0;
    fixture = await loopFixture({
      script: [
        {
          toolCalls: [
            { id: "a", name: "slow", arguments: {} },
            { id: "b", name: "slow", arguments: {} },
          ],
        },
      ],
    });
    const agent = fixture.makeAgent({
      tools: {
        declarations: () => [],
        concurrencyOf: () => {
          classified++;
          if (classified === 2) throw new Error("classifier crashed");
          return "safe";
        },
        run: (_call, exec) =>
          new Promise((resolve) => {
            running.resolve();
            exec.signal.addEventListener("abort", () => resolve({ text: "late result", isError: true }));
          }),
      },
    });
    await agent.followup("go");
    await agent.whenIdle();
    const events = await fixture.events();
    const results = ofType(events, "tool/result");
    expect(results.map((r) => [r.data.callId, r.data.code])).toEqual([
      ["a", "TOOL_OUTCOME_UNKNOWN"],
      ["b", "TOOL_NOT_STARTED"],
    ]);
    expect(results[0]!.data.text).toBe(OUTCOME_UNKNOWN_TEXT);
    expect(results[1]!.data.text).toBe(NOT_STARTED_TEXT);
    expect(types(events).at(-2)).toBe("turn/end");
    expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
  });

  it("a plugin failure mid-step ends the turn with agent/error and closes every call (L15)", async () => {
    let dispatches = 0;
    fixture = await loopFixture({
      script: [
        {
          toolCalls: [
            { id: "a", name: "t", arguments: {} },
            { id: "b", name: "t", arguments: {} },
          ],
        },
        { text: "later turn works" },
      ],
      tools: { t: { run: () => ({ text: "ran" }) } },
    });
    // A pipeline failure outside any tool body: the second class check throws.
    const agent = fixture.makeAgent({
      tools: {
        declarations: () => [],
        concurrencyOf: () => {
          dispatches++;
          if (dispatches === 2) throw new Error("classifier crashed");
          return "exclusive";
        },
        run: async () => ({ text: "ran" }),
      },
    });
    await agent.followup("go");
    await agent.whenIdle();
    const events = await fixture.events();
    const results = ofType(events, "tool/result");
    expect(results.map((r) => [r.data.callId, r.data.code])).toEqual([
      ["a", undefined],
      ["b", "TOOL_NOT_STARTED"],
    ]);
    expect(results[1]!.data.text).toBe(NOT_STARTED_TEXT);
    expect(ofType(events, "agent/error")[0]!.data.message).toBe("classifier crashed");
    expect(turnEnds(events)).toEqual(["error"]);
    expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
    // The agent is idle and takes new input (L15).
    await agent.followup("again");
    await agent.whenIdle();
    expect(turnEnds(await fixture.events())).toEqual(["error", "completed"]);
  });
});

describe("L10 request-error waterfall", () => {
  it("a listener's retry re-requests the same step from the same history; the failure stays log-only", async () => {
    const retry: Plugin = {
      name: "retry-once",
      setup(ctx) {
        ctx.hooks.onWaterfall("agent/request-error", (state) => {
          if (state.attempt > 1) return state;
          state.emit({
            type: "llm/retry",
            data: {
              attempt: state.attempt,
              delayMs: 0,
              error: { code: state.error.code, message: state.error.message },
            },
          });
          return { ...state, decision: { kind: "retry", delayMs: 0 } };
        });
      },
    };
    fixture = await loopFixture({
      script: [{ status: 500, body: { error: { message: "overloaded" } } }, { text: "fine now" }],
      plugins: [personaPlugin, retry],
    });
    await fixture.agent.followup("hi");
    await fixture.agent.whenIdle();
    const events = await fixture.events();
    expect(types(events)).toContain("assistant/attempt");
    expect(types(events)).toContain("llm/retry");
    expect(turnEnds(events)).toEqual(["completed"]);
    expect(fixture.fake.requests[0]!.rawBody).toBe(fixture.fake.requests[1]!.rawBody);
  });

  it("without a retry the turn ends error with the model's code", async () => {
    fixture = await loopFixture({ script: [{ status: 401, body: { error: { message: "bad key" } } }] });
    await fixture.agent.followup("hi");
    await fixture.agent.whenIdle();
    const end = ofType(await fixture.events(), "turn/end")[0]!;
    expect(end.data).toMatchObject({ reason: "error", error: { code: "AUTH" } });
  });
});

describe("L18 blocked pre-step", () => {
  it("a rejecting pre-step ends the turn blocked without calling the model", async () => {
    const archived: Plugin = {
      name: "reject",
      setup(ctx) {
        ctx.hooks.onWaterfall("agent/pre-step", (state) => ({
          ...state,
          reject: { reason: "session is archived" },
        }));
      },
    };
    fixture = await loopFixture({ script: [{ text: "never" }], plugins: [personaPlugin, archived] });
    await fixture.agent.followup("hi");
    await fixture.agent.whenIdle();
    expect(turnEnds(await fixture.events())).toEqual(["blocked"]);
    expect(fixture.fake.requests).toHaveLength(0);
  });
});

describe("L19 tool scheduling", () => {
  it("parallel reads commit in model order even when the later one finishes first; an exclusive call waits", async () => {
    const order: string[] = [];
    const releaseFirst = deferred();
    const secondDone = deferred();
    fixture = await loopFixture({
      script: [
        {
          toolCalls: [
            { id: "r1", name: "read", arguments: {} },
            { id: "r2", name: "read2", arguments: {} },
            { id: "w", name: "write", arguments: {} },
          ],
        },
        { text: "done" },
      ],
      tools: {
        read: {
          concurrency: "safe",
          run: async () => {
            order.push("r1 start");
            await releaseFirst.promise;
            order.push("r1 end");
            return { text: "first" };
          },
        },
        read2: {
          concurrency: "safe",
          run: () => {
            order.push("r2 start");
            order.push("r2 end");
            secondDone.resolve();
            return { text: "second" };
          },
        },
        write: {
          run: () => {
            order.push("write");
            return { text: "written" };
          },
        },
      },
    });
    await fixture.agent.followup("go");
    await secondDone.promise;
    releaseFirst.resolve();
    await fixture.agent.whenIdle();
    expect(order).toEqual(["r1 start", "r2 start", "r2 end", "r1 end", "write"]);
    const results = ofType(await fixture.events(), "tool/result").map((r) => r.data.callId);
    expect(results).toEqual(["r1", "r2", "w"]);
  });

  it("additional contexts go to the next step after the results (T15)", async () => {
    fixture = await loopFixture({
      script: [{ toolCalls: [{ id: "c", name: "t", arguments: {} }] }, { text: "ok" }],
      tools: { t: { run: () => ({ text: "r", additionalContexts: ["reminder: do not repeat"] }) } },
    });
    await fixture.agent.followup("go");
    await fixture.agent.whenIdle();
    const events = await fixture.events();
    const resultSeq = ofType(events, "tool/result")[0]!.seq;
    const context = ofType(events, "user/message").find((e) => e.data.source === "tool-context")!;
    expect(context.data.text).toBe("reminder: do not repeat");
    expect(context.seq).toBeGreaterThan(resultSeq);
  });

  it("a tool that concludes the turn ends it after its batch", async () => {
    fixture = await loopFixture({
      script: [{ toolCalls: [{ id: "c", name: "finish", arguments: {} }] }, { text: "never requested" }],
      tools: {
        finish: {
          run: (_args, exec) => {
            exec.concludeTurn();
            return { text: "recorded" };
          },
        },
      },
    });
    await fixture.agent.followup("go");
    await fixture.agent.whenIdle();
    expect(fixture.fake.requests).toHaveLength(1);
    expect(turnEnds(await fixture.events())).toEqual(["completed"]);
  });
});

describe("L17 durability checkpoints", () => {
  it("a side-effecting call starts only once its reply and start record are durable; a read-only one starts at once", async () => {
    const durableAtStart: Record<string, string[]> = {};
    const seen = (name: string) => async () => {
      const events = await fixture!.events();
      durableAtStart[name] = events
        .filter((e) => e.type === "assistant/message" || e.type === "tool/call")
        .map((e) => (e.type === "tool/call" ? `call ${e.data.callId}` : "reply"));
      return { text: `${name} done` };
    };
    fixture = await loopFixture({
      script: [
        { toolCalls: [{ id: "r", name: "look", arguments: {} }] },
        { toolCalls: [{ id: "w", name: "change", arguments: {} }] },
        { text: "done" },
      ],
      tools: {
        look: { concurrency: "safe", readOnly: true, run: seen("look") },
        change: { run: seen("change") },
      },
    });
    // Which durability each append asked for (store.ts AppendDurability).
    const asked: string[] = [];
    const { store } = fixture;
    const recording = new Proxy(store, {
      get(target, key, receiver) {
        if (key !== "append") return Reflect.get(target, key, receiver);
        return (...args: Parameters<Store["append"]>) => {
          asked.push(args[3]?.durability ?? "disk");
          return target.append(...args);
        };
      },
    });
    const agent = fixture.makeAgent({ store: recording });
    await agent.followup("go");
    await agent.whenIdle();
    // Requests only need the commit; the write's dispatch and the turn's end wait for the disk.
    expect(asked).toEqual(["commit", "commit", "disk", "commit", "disk", "commit"]);
    // The read started before its reply reached the store; the write saw its own start record.
    expect(durableAtStart.look).toEqual([]);
    expect(durableAtStart.change).toEqual(["reply", "call r", "reply", "call w"]);
    // The read's record rode the next pre-request flush: the history is complete and paired.
    const events = await fixture.events();
    expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
    expect(ofType(events, "tool/result").map((r) => r.data.text)).toEqual(["look done", "change done"]);
    // Each result says how long its call ran (whole milliseconds), for the views; the model never sees it.
    for (const result of ofType(events, "tool/result")) {
      expect(Number.isInteger(result.data.durationMs)).toBe(true);
      expect(result.data.durationMs).toBeGreaterThanOrEqual(0);
    }
  });
});

describe("L17 the request waits for its flush", () => {
  /** A store whose appends wait for `release` while `hold` is set; with `failStep` the first append of a step fails. */
  function gatedStore(store: Store) {
    const gate = { hold: false, failStep: false, held: deferred(), release: deferred() };
    const proxy = new Proxy(store, {
      get(target, key, receiver) {
        if (key !== "append") return Reflect.get(target, key, receiver);
        return async (...args: Parameters<Store["append"]>) => {
          if (gate.failStep && args[1].some((e) => e.type === "step/start")) {
            gate.failStep = false;
            throw new Error("the database went away");
          }
          if (gate.hold) {
            gate.held.resolve();
            await gate.release.promise;
          }
          return target.append(...args);
        };
      },
    });
    return { proxy, gate };
  }

  it("is sent only once its flush is stored", async () => {
    fixture = await loopFixture({ script: [{ text: "hello" }] });
    const { proxy, gate } = gatedStore(fixture.store);
    const agent = fixture.makeAgent({ store: proxy });
    gate.hold = true;
    await agent.followup("go");
    await gate.held.promise;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fixture.fake.requests).toHaveLength(0);
    gate.hold = false;
    gate.release.resolve();
    await agent.whenIdle();
    expect(fixture.fake.requests).toHaveLength(1);
    expect(turnEnds(await fixture.events())).toEqual(["completed"]);
  });

  it("is never sent when the flush fails", async () => {
    fixture = await loopFixture({ script: [{ text: "never requested" }] });
    const { proxy, gate } = gatedStore(fixture.store);
    const agent = fixture.makeAgent({ store: proxy });
    gate.failStep = true;
    await agent.followup("go");
    await agent.whenIdle().catch(() => undefined);
    expect(fixture.fake.requests).toHaveLength(0);
    // The turn still ends, honestly: the failed flush's events are kept and stored with the turn's end.
    const events = await fixture.events();
    expect(turnEnds(events)).toEqual(["error"]);
    expect(types(events)).toContain("step/start");
  });
});

describe("M14 max-tokens", () => {
  it("a length stop drops the calls and ends the turn max-tokens", async () => {
    fixture = await loopFixture({
      script: [{ text: "long", toolCalls: [{ id: "c", name: "t", arguments: {} }], finish: "length" }],
      tools: { t: { run: () => ({ text: "never" }) } },
    });
    await fixture.agent.followup("go");
    await fixture.agent.whenIdle();
    const events = await fixture.events();
    expect(turnEnds(events)).toEqual(["max-tokens"]);
    expect(ofType(events, "tool/result")).toHaveLength(0);
  });
});
