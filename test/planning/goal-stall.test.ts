/**
 * P4: a goal whose rounds make no tool call and no goal update three times in a row is blocked ("no
 * progress in 3 rounds") instead of running to its cap; the count is read from the log's events.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { runHeadless } from "../../src/loop/headless.js";
import type { GoalService } from "../../src/planning/goal-service.js";
import { goalStallPlugin, roundsWithoutProgress } from "../../src/planning/goal-stall.js";
import type { FakeRequest } from "../../testing/fake-provider/index.js";
import { type PlanningFixture, planningFixture, planningPlugins, userMessages } from "./fixture.js";

let fixture: PlanningFixture;
afterEach(async () => {
  await fixture?.close();
});

const goalsOf = (f: PlanningFixture) => f.agent.services.require("goalService") as GoalService;
const lastUser = (request: FakeRequest) => {
  const messages = (request.body?.messages as { role: string; content?: unknown }[]) ?? [];
  const last = [...messages].reverse().find((m) => m.role === "user" || m.role === "tool");
  return typeof last?.content === "string" ? last.content : "";
};

describe("P4 a goal that stalls stops", () => {
  it("three rounds without a tool call or goal update block the goal, long before the cap", async () => {
    fixture = await planningFixture({
      plugins: [...planningPlugins({ checks: false, maxRounds: 256 }), goalStallPlugin()],
      script: () => ({ text: "Thinking about it some more." }),
    });
    await goalsOf(fixture).create("never calls a tool");
    await runHeadless(fixture.agent, "go");
    const goal = await goalsOf(fixture).get();
    expect(goal).toMatchObject({
      phase: "blocked",
      roundsStarted: 3,
      blockedReason: "no progress in 3 rounds",
    });
    expect(goalsOf(fixture).armed).toBe(false);
    const events = await fixture.events();
    expect(userMessages(events, "goal-round")).toHaveLength(3);
    expect(fixture.fake.requests).toHaveLength(4); // the human turn and three rounds
    expect(
      events.some(
        (e) =>
          e.type === "goal/updated" &&
          e.data.goal.phase === "blocked" &&
          e.data.goal.blockedReason === "no progress in 3 rounds",
      ),
    ).toBe(true);
  });

  it("a round with a tool call is progress: the count starts again after it", async () => {
    fixture = await planningFixture({
      plugins: [...planningPlugins({ checks: false, maxRounds: 256 }), goalStallPlugin()],
      tools: { look: { run: () => ({ text: "looked" }) } },
      script: (request, index) => {
        // Round 2 (requests 2–3) calls a tool; every other round only talks.
        if (index === 2) return { toolCalls: [{ id: "l1", name: "look", arguments: {} }] };
        if (lastUser(request) === "looked") return { text: "Looked." };
        return { text: "Still thinking." };
      },
    });
    await goalsOf(fixture).create("mostly talks");
    await runHeadless(fixture.agent, "go");
    const goal = await goalsOf(fixture).get();
    // Round 1 stalls, round 2 progresses, rounds 3–5 stall: blocked after round 5.
    expect(goal).toMatchObject({
      phase: "blocked",
      roundsStarted: 5,
      blockedReason: "no progress in 3 rounds",
    });
  });

  it("counts from the events: a person's turn ends a run of rounds", () => {
    let seq = 0;
    const e = (type: string, data: unknown) =>
      ({ sessionId: "s", seq: ++seq, type, at: "", data }) as LogEvent;
    const round = () => [
      e("turn/start", {}),
      e("user/message", { text: "<goal_round>", source: "goal-round" }),
    ];
    const events = [
      ...round(),
      ...round(),
      e("turn/start", {}),
      e("user/message", { text: "hi", source: "human" }),
      ...round(),
      ...round(),
    ];
    expect(roundsWithoutProgress(events)).toBe(2);
    expect(roundsWithoutProgress([...events, ...round(), e("goal/updated", {})])).toBe(0);
  });
});
