/**
 * S1 fork: seeded with the parent's events up to its last `turn/end` (never the turn in flight), the same
 * model, effort and tool declarations, so its first request extends the parent's last completed request
 * byte for byte (the provider's prefix cache is reused).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { runHeadless } from "../../src/loop/headless.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { messagesOf, openTestAgent, toolResultsSinceLastUser, userText } from "./support.js";

let fake: FakeProvider | undefined;
let store: Store | undefined;
afterEach(async () => {
  await fake?.close();
  await store?.close();
});

function script(request: FakeRequest) {
  const text = userText(request);
  if (text.includes("FORKED TASK")) return { text: "fork did it" };
  if (text.includes("Background subagent")) return { text: "thanks" };
  if (!text.includes("FORK NOW")) return { text: "hi there" };
  if (toolResultsSinceLastUser(request) === 0)
    return {
      toolCalls: [{ id: "f1", name: "subagent_fork", arguments: { task: "FORKED TASK: finish it" } }],
    };
  return { text: "forked" };
}

describe("subagents: fork (S1)", () => {
  it("the fork's first request extends the parent's last completed request byte for byte", async () => {
    fake = await startFakeProvider({ script });
    store = await openStore({ home: mkdtempSync(join(tmpdir(), "bdsh-fork-")) });
    const { agent } = await openTestAgent(store, fake.url);
    await runHeadless(agent, "hello");
    const parentLast = fake.requests.at(-1)!;
    await runHeadless(agent, "FORK NOW");
    const forkFirst = fake.requests.find((r) => userText(r).includes("FORKED TASK"))!;
    expect(forkFirst).toBeDefined();
    const launched = agent.log.events.find(
      (e): e is LogEvent<"tool/result"> => e.type === "tool/result" && e.data.name === "subagent_fork",
    );
    expect(launched!.data.details).toMatchObject({ kind: "subagent", mode: "fork" });
    expect(launched!.data.text).toContain((launched!.data.details as { childId: string }).childId);
    const parentBody = parentLast.body as Record<string, unknown>;
    const forkBody = forkFirst.body as Record<string, unknown>;
    // Same model, effort and tools: the prefix the provider caches.
    expect(forkBody.model).toBe(parentBody.model);
    expect(JSON.stringify(forkBody.tools)).toBe(JSON.stringify(parentBody.tools));
    for (const key of Object.keys(parentBody).filter((k) => k !== "messages" && k !== "tools"))
      expect([key, JSON.stringify(forkBody[key])]).toEqual([key, JSON.stringify(parentBody[key])]);
    const before = messagesOf(parentLast);
    const after = messagesOf(forkFirst);
    expect(after.length).toBeGreaterThan(before.length);
    expect(JSON.stringify(after.slice(0, before.length))).toBe(JSON.stringify(before));
    // The fork saw the completed turn's answer, and not the turn in flight.
    expect(JSON.stringify(after)).toContain("hi there");
    expect(userText(forkFirst)).not.toContain("FORK NOW");
    // A delegated fork: approval pinned to never, told it is delegated.
    expect(userText(forkFirst)).toContain("Approval policy: never");
    const childId = JSON.stringify(agent.log.events).match(/started subagent ([0-9a-f-]{36})/)![1]!;
    const row = await store.getSession(childId);
    expect(row?.kind).toBe("fork");
    expect(row?.parentId).toBe(agent.sessionId);
    // The fork may not delegate again (depth 1 of 1): its launch tools refuse at call time.
    expect(userText(forkFirst)).toContain("Delegation depth for `subagent`: current 1, maximum 1");
    await agent.close();
  });
});
