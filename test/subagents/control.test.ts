/**
 * S1 limits, S4 structured output, S5 control tools against the scripted provider, through the standard
 * preset: ACTIVATION_LIMIT_REACHED at capacity, messages both ways ("Agent <id> sent a message: …", waking
 * an idle child), interrupt_agent, list_agents, and structured_output (recorded, refused after, nudged when
 * missing, FAILED without it).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { runHeadless } from "../../src/loop/headless.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { childView } from "../../src/subagents/ledger.js";
import {
  type FakeProvider,
  type FakeReply,
  type FakeRequest,
  startFakeProvider,
} from "../../testing/fake-provider/index.js";
import {
  delay,
  messagesOf,
  openTestAgent,
  testConfig,
  textOf,
  toolResultsSinceLastUser,
  userText,
} from "./support.js";

let fake: FakeProvider | undefined;
let store: Store | undefined;
afterEach(async () => {
  await fake?.close();
  await store?.close();
});

async function setup(script: (r: FakeRequest) => FakeReply | Promise<FakeReply>, configPatch = {}) {
  fake = await startFakeProvider({ script });
  store = await openStore({ home: mkdtempSync(join(tmpdir(), "bdsh-ctl-")) });
  const config = { ...testConfig(fake.url), ...configPatch };
  return openTestAgent(store, fake.url, {}, config);
}

const toolTexts = (events: readonly LogEvent[], name: string) =>
  events.flatMap((e) => (e.type === "tool/result" && e.data.name === name ? [e.data.text] : []));
/** Issue 32: what each call of `name` recorded for people's views. */
const toolDetails = (events: readonly LogEvent[], name: string) =>
  events.flatMap((e) => (e.type === "tool/result" && e.data.name === name ? [e.data.details] : []));
const notices = (events: readonly LogEvent[], source: string) =>
  events.flatMap((e) => (e.type === "user/message" && e.data.source === source ? [e.data.text] : []));
const parentIdIn = (request: FakeRequest) =>
  /Your parent agent's id is "([^"]+)"/.exec(userText(request))?.[1];
const lastToolText = (request: FakeRequest) => {
  const tool = messagesOf(request).findLast((m) => m.role === "tool");
  return tool ? textOf(tool) : "";
};

describe("subagents: limits and control tools (S1, S4, S5)", () => {
  it("S1: at capacity a launch fails with ACTIVATION_LIMIT_REACHED; there is no queue", async () => {
    const { agent } = await setup(
      async (r) => {
        if (userText(r).includes("WORKER")) {
          await delay(200);
          return { text: "worked" };
        }
        if (userText(r).includes("Background subagent")) return { text: "ok" };
        if (toolResultsSinceLastUser(r) > 0) return { text: "launched" };
        return {
          toolCalls: [1, 2, 3].map((n) => ({
            id: `s${n}`,
            name: "subagent",
            arguments: { task: `WORKER ${n}` },
          })),
        };
      },
      { subagents: { ...DEFAULT_CONFIG.subagents, max_active: 2 } },
    );
    await runHeadless(agent, "start three");
    const results = toolTexts(agent.log.events, "subagent");
    expect(results.filter((t) => t.startsWith("started subagent "))).toHaveLength(2);
    expect(results.filter((t) => t.startsWith("Error: "))).toEqual([
      "Error: ACTIVATION_LIMIT_REACHED: 2 subagents are already active in this session tree; no more can start until one settles",
    ]);
    await agent.close();
  });

  it("S5: a child's message reaches the parent with the prefix; the parent's message wakes the idle child", async () => {
    let childTurns = 0;
    const { agent } = await setup(async (r) => {
      const text = userText(r);
      if (text.includes("HELPER")) {
        const parent = parentIdIn(r)!;
        if (toolResultsSinceLastUser(r) === 0 && !text.includes("MORE PLEASE"))
          return {
            toolCalls: [
              { id: "m", name: "send_message", arguments: { agent_id: parent, message: "halfway" } },
            ],
          };
        childTurns++;
        return { text: text.includes("MORE PLEASE") ? "second answer" : "first answer" };
      }
      // Parent.
      if (text.includes("second answer")) return { text: "all done" };
      const settledOnce = text.includes("first answer");
      if (settledOnce && toolResultsSinceLastUser(r) === 0) {
        const id = /Background subagent (\S+) finished/.exec(text)![1]!;
        return {
          toolCalls: [
            { id: "p2", name: "send_message", arguments: { agent_id: id, message: "MORE PLEASE" } },
          ],
        };
      }
      if (settledOnce || text.includes("sent a message")) return { text: "noted" };
      if (toolResultsSinceLastUser(r) === 0)
        return { toolCalls: [{ id: "p1", name: "subagent", arguments: { task: "HELPER: do it" } }] };
      return { text: "started" };
    });
    await runHeadless(agent, "delegate");
    const events = agent.log.events;
    const childId = toolTexts(events, "subagent")[0]!.split(" ")[2]!;
    expect(notices(events, "agent-message")).toEqual([`Agent ${childId} sent a message: halfway`]);
    expect(toolTexts(events, "send_message")).toEqual([`message delivered to agent ${childId}`]);
    expect(toolDetails(events, "subagent")).toEqual([{ kind: "subagent", childId, mode: "spawn" }]);
    expect(toolDetails(events, "send_message")).toEqual([{ kind: "subagent", childId }]);
    // The idle child woke for the parent's message, worked again and settled a second time.
    const settlements = notices(events, "subagent-settled");
    expect(settlements).toHaveLength(2);
    expect(settlements[1]).toContain("second answer");
    expect(childTurns).toBe(2);
    const childEvents = await store!.read(childId);
    expect(
      childEvents.some(
        (e) =>
          e.type === "user/message" && e.data.text === `Agent ${agent.sessionId} sent a message: MORE PLEASE`,
      ),
    ).toBe(true);
    await agent.close();
  });

  it("S5: send_message to a session that is not the parent or an own child is refused", async () => {
    const other = "0190d7a2-0000-7000-8000-000000000000"; // no such session
    const { agent } = await setup((r) =>
      toolResultsSinceLastUser(r) === 0
        ? { toolCalls: [{ id: "x", name: "send_message", arguments: { agent_id: other, message: "hi" } }] }
        : { text: "ok" },
    );
    await runHeadless(agent, "message a stranger");
    expect(toolTexts(agent.log.events, "send_message")[0]).toMatch(/^Error: no agent "0190d7a2-.*" in reach/);
    await agent.close();
  });

  it("S5: interrupt_agent stops a running child; it settles as stopped; list_agents shows it", async () => {
    const { agent } = await setup(async (r) => {
      const text = userText(r);
      if (text.includes("SLOW")) {
        await delay(20_000);
        return { text: "too late" };
      }
      if (text.includes("Background subagent")) return { text: "understood" };
      const last = lastToolText(r);
      if (toolResultsSinceLastUser(r) === 0)
        return { toolCalls: [{ id: "a", name: "subagent", arguments: { task: "SLOW: take forever" } }] };
      if (last.startsWith("started subagent ")) {
        const id = last.split(" ")[2]!;
        // Wait until the child's request is in flight, so the interrupt meets a running turn.
        while (!fake!.requests.some((q) => userText(q).includes("SLOW"))) await delay(20);
        return { toolCalls: [{ id: "i", name: "interrupt_agent", arguments: { agent_id: id } }] };
      }
      if (last.startsWith("asked subagent"))
        return { toolCalls: [{ id: "l", name: "list_agents", arguments: {} }] };
      return { text: "stopped it" };
    });
    await runHeadless(agent, "start and stop");
    const events = agent.log.events;
    const childId = toolTexts(events, "subagent")[0]!.split(" ")[2]!;
    expect(toolTexts(events, "interrupt_agent")).toEqual([
      `asked subagent ${childId} to stop; you will be notified when it settles`,
    ]);
    expect(toolDetails(events, "interrupt_agent")).toEqual([{ kind: "subagent", childId }]);
    expect(toolTexts(events, "list_agents")[0]).toMatch(
      new RegExp(
        `^${childId} \\[spawn\\] (RUNNING|CANCEL_REQUESTED|CANCELLED) — SLOW: take forever\\nYou are notified`,
      ),
    );
    expect(notices(events, "subagent-settled")[0]).toMatch(
      new RegExp(`^Background subagent ${childId} was stopped before it finished\\.`),
    );
    expect((await childView(store!, childId))?.state).toBe("CANCELLED");
    await agent.close();
  });

  it("S4: structured_output records the result, concludes the turn, refuses later calls; the parent gets it", async () => {
    const schema = {
      type: "object",
      properties: { answer: { type: "integer" } },
      required: ["answer"],
      additionalProperties: false,
    };
    const { agent } = await setup((r) => {
      const text = userText(r);
      if (text.includes("REPORTER")) {
        expect(JSON.stringify(r.body?.tools)).toContain("structured_output");
        return {
          toolCalls: [
            { id: "s1", name: "structured_output", arguments: { answer: 42 } },
            { id: "s2", name: "structured_output", arguments: { answer: 43 } },
            { id: "s3", name: "todo_write", arguments: { todos: [] } },
          ],
        };
      }
      if (text.includes("Background subagent")) return { text: "got it" };
      if (toolResultsSinceLastUser(r) === 0)
        return {
          toolCalls: [
            { id: "p", name: "subagent", arguments: { task: "REPORTER: answer", output_schema: schema } },
          ],
        };
      return { text: "waiting" };
    });
    await runHeadless(agent, "ask for a number");
    const childId = toolTexts(agent.log.events, "subagent")[0]!.split(" ")[2]!;
    const childEvents = await store!.read(childId);
    expect(toolTexts(childEvents, "structured_output")).toEqual([
      "structured output recorded",
      'Error: structured output already recorded: {"answer":42}',
    ]);
    expect(toolTexts(childEvents, "todo_write")).toEqual([
      'Error: structured output already recorded: {"answer":42}',
    ]);
    // Concluded: no further request from the child after the report.
    expect(fake!.requests.filter((q) => userText(q).includes("REPORTER"))).toHaveLength(1);
    const notice = notices(agent.log.events, "subagent-settled")[0]!;
    expect(notice).toContain('Structured result: {"answer":42}');
    expect((await childView(store!, childId))?.state).toBe("SUCCEEDED");
    await agent.close();
  });

  it("S4: a model-written output_schema that is too deep or too large is refused before any child starts", async () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 20; i++) deep = { type: "object", properties: { x: deep } };
    const { agent } = await setup((r) =>
      toolResultsSinceLastUser(r) === 0
        ? { toolCalls: [{ id: "d", name: "subagent", arguments: { task: "DEEP", output_schema: deep } }] }
        : { text: "ok" },
    );
    await runHeadless(agent, "deep schema");
    expect(toolTexts(agent.log.events, "subagent")[0]).toMatch(/^Error: output_schema must be at most/);
    expect(agent.log.events.some((e) => e.type === "subagent/started")).toBe(false);
    await agent.close();
  });

  it("S4: a child that never reports is nudged, then settles FAILED", async () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    const { agent } = await setup((r) => {
      const text = userText(r);
      if (text.includes("FORGETFUL")) return { text: "the answer is blue" };
      if (text.includes("Background subagent")) return { text: "hm" };
      if (toolResultsSinceLastUser(r) === 0)
        return {
          toolCalls: [
            { id: "p", name: "subagent", arguments: { task: "FORGETFUL: answer", output_schema: schema } },
          ],
        };
      return { text: "waiting" };
    });
    await runHeadless(agent, "ask");
    const childId = toolTexts(agent.log.events, "subagent")[0]!.split(" ")[2]!;
    const childRequests = fake!.requests.filter((q) => userText(q).includes("FORGETFUL"));
    expect(childRequests.length).toBeGreaterThanOrEqual(2); // the nudge ran another step
    expect(userText(childRequests[1]!)).toContain("structured_output");
    expect((await childView(store!, childId))?.state).toBe("FAILED");
    await agent.close();
  });
});
