/**
 * S3 settlement texts: the summary line for every way a child's work can end, the closing message or its
 * absence, the diagnostic (at most 4,096 bytes) of a child that failed; P4 step 1: a goal round waits for
 * running children.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runHeadless } from "../../src/loop/headless.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { childView } from "../../src/subagents/ledger.js";
import { settlementSummary } from "../../src/subagents/texts.js";
import { type FakeProvider, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { openTestAgent, toolResultsSinceLastUser, userText } from "./support.js";

let fake: FakeProvider | undefined;
let store: Store | undefined;
afterEach(async () => {
  await fake?.close();
  await store?.close();
});

describe("S3: the settlement message", () => {
  it("has the seed's summary line for each way a child's work ends", () => {
    const id = "c1";
    expect(settlementSummary(id, "completed")).toBe(
      "Background subagent c1 finished and will do no further work unless you send it more.",
    );
    expect(settlementSummary(id, "aborted")).toBe("Background subagent c1 was stopped before it finished.");
    expect(settlementSummary(id, "max-tokens")).toBe(
      "Background subagent c1 ran out of room before it finished.",
    );
    expect(settlementSummary(id, "blocked")).toBe("Background subagent c1 declined the task.");
    expect(settlementSummary(id, "error")).toBe("Background subagent c1 failed before it finished.");
    expect(settlementSummary(id, "interrupted")).toMatch(
      /^Background subagent c1 was interrupted before it finished/,
    );
  });

  it("a child that fails says so, with no closing message and a diagnostic of at most 4,096 bytes", async () => {
    const long = "é".repeat(6_000); // 12,000 bytes of UTF-8
    fake = await startFakeProvider({
      script: (request: FakeRequest) => {
        const text = userText(request);
        if (text.includes("BROKEN CHILD"))
          return {
            status: 400,
            body: { error: { message: `bad request ${long}`, type: "invalid_request_error" } },
          };
        if (text.includes("Background subagent")) return { text: "sorry to hear" };
        if (toolResultsSinceLastUser(request) === 0)
          return { toolCalls: [{ id: "b", name: "subagent", arguments: { task: "BROKEN CHILD: try" } }] };
        return { text: "waiting" };
      },
    });
    store = await openStore({ home: mkdtempSync(join(tmpdir(), "bdsh-settle-")) });
    const { agent } = await openTestAgent(store, fake.url);
    await runHeadless(agent, "delegate something doomed");
    const notice = agent.log.events.flatMap((e) =>
      e.type === "user/message" && e.data.source === "subagent-settled" ? [e.data.text] : [],
    )[0]!;
    const [summary, closing, diagnostic] = notice.split("\n\n");
    expect(summary).toMatch(/^Background subagent \S+ failed before it finished\.$/);
    expect(closing).toBe("It left no closing message.");
    expect(diagnostic).toMatch(/^Diagnostic: INVALID_REQUEST: /);
    expect(Buffer.byteLength(diagnostic!.slice("Diagnostic: ".length))).toBeLessThanOrEqual(4_096);
    const childId = /Background subagent (\S+)/.exec(summary!)![1]!;
    expect((await childView(store, childId))?.state).toBe("FAILED");
    await agent.close();
  });
});

describe("P4 step 1: a goal round waits for running children", () => {
  it("queues the next round only after the child settled", async () => {
    let childDone = 0;
    let roundSawChildDone: boolean | undefined;
    fake = await startFakeProvider({
      script: async (request: FakeRequest) => {
        const text = userText(request);
        if (text.includes("GOAL CHILD")) {
          await new Promise((r) => setTimeout(r, 300));
          childDone = Date.now();
          return { text: "child finished" };
        }
        if (text.includes("<goal_round>") && roundSawChildDone === undefined) {
          roundSawChildDone = childDone > 0;
          return { toolCalls: [{ id: "u", name: "update_goal", arguments: { action: "complete" } }] };
        }
        if (text.includes("<goal_round>") || text.includes("goal_complete")) return { text: "closing" };
        if (text.includes("Background subagent")) return { text: "child reported" };
        if (toolResultsSinceLastUser(request) === 0 && text.includes("GOAL PARENT"))
          return {
            toolCalls: [
              { id: "g", name: "create_goal", arguments: { objective: "delegate and finish" } },
              { id: "s", name: "subagent", arguments: { task: "GOAL CHILD: work" } },
            ],
          };
        return { text: "first turn over" };
      },
    });
    store = await openStore({ home: mkdtempSync(join(tmpdir(), "bdsh-goal-sa-")) });
    const { agent } = await openTestAgent(store, fake.url);
    await runHeadless(agent, "GOAL PARENT: work toward an objective with a helper");
    expect(roundSawChildDone).toBe(true);
    await agent.close();
  });
});
