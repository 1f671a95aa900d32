/**
 * P7 Ralph loop: a fresh worker session per round, seeded only with the objective and the last handoff
 * from the store; the handoff is validated; the loop ends on complete.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/loop/agent.js";
import { runHeadless } from "../../src/loop/headless.js";
import { createAdapter } from "../../src/model/adapter.js";
import { resolveRoute } from "../../src/model/catalog.js";
import { reportToolCheck } from "../../src/planning/continuation.js";
import { RALPH_REPORT, ralphReportTool, runRalph, validateHandoff } from "../../src/planning/ralph.js";
import type { FakeRequest } from "../../testing/fake-provider/index.js";
import { personaPlugin } from "../loop/harness.js";
import { TEST_MODEL } from "../support/test-model.js";
import { type PlanningFixture, planningFixture, testToolsPlugin } from "./fixture.js";

let fixture: PlanningFixture;
afterEach(async () => {
  await fixture?.close();
});

const firstUser = (request: FakeRequest) =>
  ((request.body?.messages as { role: string; content: string }[]) ?? []).find((m) => m.role === "user")
    ?.content ?? "";

describe("P7 Ralph loop", () => {
  it("validates handoffs: continue needs nextSteps, complete needs evidence, blocked needs a blocker", () => {
    expect(validateHandoff({ status: "continue", summary: "s" })).toEqual({
      error: "continue needs at least one nextSteps entry",
    });
    expect(validateHandoff({ status: "complete", summary: "s", nextSteps: ["x"], evidence: ["e"] })).toEqual({
      error: "complete needs evidence and no nextSteps",
    });
    expect(validateHandoff({ status: "blocked", summary: "s" })).toEqual({
      error: "blocked needs a blocker",
    });
    expect(validateHandoff({ status: "complete", summary: "s", evidence: ["tests pass"] })).toMatchObject({
      handoff: { status: "complete" },
    });
  });

  it("runs fresh workers that see only the objective and the previous handoff, until complete", async () => {
    let silentOnce = true;
    fixture = await planningFixture({
      plugins: [],
      script: (request) => {
        const prompt = firstUser(request);
        const messages = (request.body?.messages as { role: string }[]) ?? [];
        if (messages.some((m) => m.role === "tool")) return { text: "reported" };
        if (prompt.includes("Previous report: none")) {
          if (silentOnce) {
            silentOnce = false;
            return { text: "I think that is it." }; // nudged once to report (S4's gap)
          }
          const report = { status: "continue", summary: "half done", nextSteps: ["finish the printer"] };
          return { toolCalls: [{ id: "r1", name: RALPH_REPORT, arguments: report }] };
        }
        const report = { status: "complete", summary: "done", evidence: ["tests pass"] };
        return { toolCalls: [{ id: "r2", name: RALPH_REPORT, arguments: report }] };
      },
    });
    const adapter = createAdapter(resolveRoute({ provider: "deepseek", baseUrl: fixture.fake.url }, {}), {
      env: { DEEPSEEK_API_KEY: "k" },
    });
    const result = await runRalph({
      store: fixture.store,
      parentSessionId: fixture.sessionId,
      objective: "fix parser and printer",
      maxRounds: 5,
      handoffMaxChars: 16_384,
      async runWorker(sessionId, prompt) {
        const worker = new Agent({
          store: fixture.store,
          sessionId,
          owner: "ralph-test",
          adapter,
          model: TEST_MODEL,
          workspace: "/tmp",
          session: { kind: "ralph" },
          plugins: [
            personaPlugin,
            testToolsPlugin({}),
            { name: "ralph-report", setup: (ctx) => ctx.tools.register(ralphReportTool) },
            reportToolCheck(2, RALPH_REPORT),
          ],
        });
        await runHeadless(worker, prompt);
      },
    });
    expect(result).toMatchObject({ status: "complete", rounds: 2, handoff: { evidence: ["tests pass"] } });
    const children = await fixture.store.listSessions({ parentId: fixture.sessionId });
    expect(children.map((s) => s.kind)).toEqual(["ralph", "ralph"]);
    const round2 = fixture.fake.requests.map(firstUser).find((p) => p.includes("round 2/5"));
    expect(round2).toContain('"nextSteps":["finish the printer"]');
    expect(round2).not.toContain("I think that is it.");
  });
});
