/**
 * S1–S3, L16 against the scripted provider: a parent starts two children in one step, both settle, the
 * parent wakes with both settlement messages, and the one-shot run ends only after both settled.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runHeadless } from "../../src/loop/headless.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { delay, openTestAgent, toolResultsSinceLastUser, userText } from "./support.js";

let fake: FakeProvider | undefined;
let store: Store | undefined;
afterEach(async () => {
  await fake?.close();
  await store?.close();
  fake = undefined;
  store = undefined;
});

/** Parent: two launches, then "waiting"; after settlements, "all done". Children: their answer, slowly. */
async function script(request: FakeRequest) {
  const text = userText(request);
  if (text.includes("CHILD A")) {
    await delay(150);
    return { text: "alpha result" };
  }
  if (text.includes("CHILD B")) {
    await delay(300);
    return { text: "beta result" };
  }
  const settled = (text.match(/Background subagent \S+ finished/g) ?? []).length;
  if (settled > 0) return { text: `noted ${settled} settlement(s)` };
  if (toolResultsSinceLastUser(request) === 0)
    return {
      toolCalls: [
        { id: "a", name: "subagent", arguments: { task: "CHILD A: report alpha" } },
        { id: "b", name: "subagent", arguments: { task: "CHILD B: report beta" } },
      ],
    };
  return { text: "waiting for both" };
}

describe("subagents: spawn and settle (S1, S2, S3, L16)", () => {
  it("two children started in one step both settle, the parent wakes with both, and the run waits for them", async () => {
    fake = await startFakeProvider({ script });
    const home = mkdtempSync(join(tmpdir(), "bdsh-sa-store-"));
    store = await openStore({ home });
    const { agent } = await openTestAgent(store, fake.url);
    const result = await runHeadless(agent, "PARENT: delegate two tasks");
    const events = agent.log.events;
    // S2: each launch answered at once with the child's id.
    const started = events.filter((e) => e.type === "tool/result" && e.data.name === "subagent");
    expect(started.map((e) => (e.type === "tool/result" ? e.data.text : ""))).toEqual([
      expect.stringMatching(/^started subagent \S+$/),
      expect.stringMatching(/^started subagent \S+$/),
    ]);
    const ids = started.map((e) => (e.type === "tool/result" ? e.data.text.split(" ")[2]! : ""));
    expect(events.filter((e) => e.type === "subagent/started")).toHaveLength(2);
    // S3: both settlement messages reached the parent, from its durable inbox, with each child's text.
    const notices = events.flatMap((e) =>
      e.type === "user/message" && e.data.source === "subagent-settled" ? [e.data.text] : [],
    );
    expect(notices).toHaveLength(2);
    for (const [id, answer] of [
      [ids[0], "alpha result"],
      [ids[1], "beta result"],
    ]) {
      const notice = notices.find((n) => n.includes(id!));
      expect(notice).toBe(
        `Background subagent ${id} finished and will do no further work unless you send it more.\n\nIts closing message:\n${answer}`,
      );
    }
    // L16: the run ended after both settled, on the parent's answer to them.
    expect(result.exitCode).toBe(0);
    const lastText = events.findLast((e) => e.type === "assistant/message");
    expect(JSON.stringify(lastText?.type === "assistant/message" ? lastText.data.blocks : [])).toMatch(
      /noted \d settlement/,
    );
    // S1: children are sessions with the parent's id, kind subagent, approval pinned to never.
    for (const id of ids) {
      const row = await store.getSession(id);
      expect(row?.parentId).toBe(agent.sessionId);
      expect(row?.kind).toBe("subagent");
      const childEvents = await store.read(id);
      expect(childEvents.some((e) => e.type === "subagent/settled")).toBe(true);
    }
    const childRequests = fake.requests.filter((r) => /CHILD [AB]/.test(userText(r)));
    expect(childRequests.length).toBe(2);
    for (const r of childRequests) {
      const text = userText(r);
      expect(text).toContain("Approval policy: never");
      expect(text).toContain("You are a delegated subagent");
      expect(text).toContain(`Your parent agent's id is "${agent.sessionId}"`);
    }
    await agent.close();
  });
});
