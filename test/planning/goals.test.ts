/**
 * Goals (P3–P6): the service, the tools, the round driver's rounds and stops, and the `/goal` parser,
 * driven through a real agent on SQLite against the fake provider.
 */
import { afterEach, describe, expect, it } from "vitest";
import { runHeadless } from "../../src/loop/headless.js";
import { GOAL_USAGE, parseGoalCommand, runGoalCommand } from "../../src/planning/goal-command.js";
import type { GoalRoundDriver } from "../../src/planning/goal-plugin.js";
import type { GoalService } from "../../src/planning/goal-service.js";
import type { FakeReply, FakeRequest } from "../../testing/fake-provider/index.js";
import { type PlanningFixture, planningFixture, planningPlugins, userMessages } from "./fixture.js";

let fixture: PlanningFixture;
afterEach(async () => {
  await fixture?.close();
});

const call = (name: string, args: Record<string, unknown> = {}, id = `c-${name}`): FakeReply => ({
  toolCalls: [{ id, name, arguments: args }],
});
const lastUser = (request: FakeRequest) => {
  const messages = (request.body?.messages as { role: string; content?: unknown }[]) ?? [];
  const last = [...messages].reverse().find((m) => m.role === "user" || m.role === "tool");
  return typeof last?.content === "string" ? last.content : "";
};
const goalsOf = (f: PlanningFixture) => f.agent.services.require("goalService") as GoalService;
const driverOf = (f: PlanningFixture) => f.agent.api("goalRounds") as GoalRoundDriver;

describe("P4 goal rounds", () => {
  it("queues <goal_round> with the JSON-quoted objective and Round: N/MAX until the model completes", async () => {
    fixture = await planningFixture({
      plugins: planningPlugins({ checks: false, maxRounds: 5 }),
      script: (request, index) => {
        if (index === 0) return { text: "Started." };
        if (lastUser(request).startsWith("<goal_round>")) return call("update_goal", { action: "complete" });
        if (lastUser(request).startsWith("<goal_complete>")) return { text: "All done: verified." };
        return { text: "…" };
      },
    });
    await goalsOf(fixture).create('fix "quoted" bug');
    const result = await runHeadless(fixture.agent, "please fix it");
    const events = await fixture.events();
    const rounds = userMessages(events, "goal-round");
    expect(rounds).toHaveLength(1);
    expect(rounds[0]).toMatch(/^<goal_round>\nObjective: "fix \\"quoted\\" bug"\nRound: 1\/5\n/);
    expect(rounds[0]).toMatch(/<\/goal_round>$/);
    expect(userMessages(events, "goal-wrapup")[0]).toMatch(/^<goal_complete>/);
    expect(events.filter((e) => e.type === "goal/round").map((e) => e.data)).toEqual([
      { round: 1, maxRounds: 5 },
    ]);
    expect(events.some((e) => e.type === "goal/updated" && e.data.goal.phase === "complete")).toBe(true);
    expect((await goalsOf(fixture).get())?.phase).toBe("complete");
    expect(result.exitCode).toBe(0);
    expect(fixture.fake.requests).toHaveLength(3);
  });

  it("blocks the goal at the round cap: Goal reached its configured limit of N rounds.", async () => {
    fixture = await planningFixture({
      plugins: planningPlugins({ checks: false, maxRounds: 2 }),
      script: () => ({ text: "Still working on it." }),
    });
    await goalsOf(fixture).create("never ends");
    await runHeadless(fixture.agent, "go");
    const goal = await goalsOf(fixture).get();
    expect(goal).toMatchObject({ phase: "blocked", roundsStarted: 2 });
    expect(goal?.blockedReason).toBe("Goal reached its configured limit of 2 rounds.");
    expect(fixture.fake.requests).toHaveLength(3);
    expect(goalsOf(fixture).armed).toBe(false);
  });

  it("disarms after a max-tokens turn end (no round follows a length stop)", async () => {
    fixture = await planningFixture({
      plugins: planningPlugins({ checks: false }),
      script: () => ({ text: "cut", finish: "length" }),
    });
    await goalsOf(fixture).create("x");
    await runHeadless(fixture.agent, "go");
    expect(fixture.fake.requests).toHaveLength(1);
    expect(goalsOf(fixture).armed).toBe(false);
    expect((await goalsOf(fixture).get())?.phase).toBe("active");
  });

  it("pauses the goal when the turn is aborted", async () => {
    let release: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      release = resolve;
    });
    fixture = await planningFixture({
      plugins: planningPlugins({ checks: false }),
      tools: {
        wait: {
          run: (_args, exec) =>
            new Promise((resolve) => {
              release();
              exec.signal.addEventListener("abort", () => resolve({ text: "stopped", isError: true }));
            }),
        },
      },
      script: () => call("wait"),
    });
    await goalsOf(fixture).create("x");
    await fixture.agent.followup("go");
    await started;
    await fixture.agent.cancel();
    await fixture.agent.whenIdle();
    expect((await goalsOf(fixture).get())?.phase).toBe("paused");
    expect(goalsOf(fixture).armed).toBe(false);
  });

  it("lets queued human input win over a new round", async () => {
    fixture = await planningFixture({ plugins: planningPlugins({ checks: false }), script: [] });
    await goalsOf(fixture).create("x");
    await fixture.store.enqueueInbox(fixture.sessionId, {
      queue: "next-turn",
      mode: "followup",
      source: "human",
      text: "wait, change of plan",
    });
    expect(await driverOf(fixture).queueRound()).toBeUndefined();
    expect((await goalsOf(fixture).get())?.roundsStarted).toBe(0);
  });

  it("P3: a new agent on the same session starts disarmed and queues no round", async () => {
    fixture = await planningFixture({ plugins: planningPlugins({ checks: false }), script: [] });
    await goalsOf(fixture).create("x");
    const other = fixture.makeAgent();
    await other.setup();
    const service = other.services.require("goalService") as GoalService;
    expect(service.armed).toBe(false);
    expect((await service.active())?.objective).toBe("x");
    expect(await (other.api("goalRounds") as GoalRoundDriver).queueRound()).toBeUndefined();
  });
});

describe("P5 goal tools", () => {
  it("refuses blocked before 3 rounds with the exact text, and the model cannot resume", async () => {
    fixture = await planningFixture({
      plugins: planningPlugins({ checks: false }),
      script: (request, index) => {
        if (index === 0) return call("update_goal", { action: "blocked", reason: "stuck" }, "b1");
        if (index === 1) return call("update_goal", { action: "resume" }, "r1");
        if (index === 2) return call("update_goal", { action: "pause" }, "p1");
        return { text: lastUser(request) };
      },
    });
    await goalsOf(fixture).create("x");
    await runHeadless(fixture.agent, "go");
    const results = (await fixture.events()).flatMap((e) => (e.type === "tool/result" ? [e.data.text] : []));
    expect(results[0]).toBe("Error: blocked requires at least 3 consecutive goal rounds; current round is 0");
    expect(results[1]).toBe("Error: only the user can resume a paused goal");
    expect(JSON.parse(results[2]!)).toMatchObject({ goal: { phase: "paused" }, activation: "disarmed" });
  });

  it("creates a goal only in a turn with direct human input", async () => {
    fixture = await planningFixture({
      plugins: planningPlugins({ checks: false, maxRounds: 1 }),
      script: (_request, index) =>
        index === 0 ? call("create_goal", { objective: "long job" }) : { text: "ok" },
    });
    await runHeadless(fixture.agent, "do the long job");
    const goal = await goalsOf(fixture).get();
    expect(goal?.objective).toBe("long job");
    const result = (await fixture.events()).find((e) => e.type === "tool/result");
    expect(JSON.parse(result?.type === "tool/result" ? result.data.text : "{}")).toMatchObject({
      goal: { objective: "long job", roundsStarted: 0, maxGoalRounds: 1 },
      activation: "armed",
    });
  });

  it("refuses create_goal in a turn opened by a schedule reminder", async () => {
    fixture = await planningFixture({
      plugins: planningPlugins({ checks: false }),
      script: (_request, index) => (index === 0 ? call("create_goal", { objective: "x" }) : { text: "ok" }),
    });
    await fixture.agent.followup("[SCHEDULE REMINDER] …", "schedule");
    await fixture.agent.whenIdle();
    const result = (await fixture.events()).find((e) => e.type === "tool/result");
    expect(result?.type === "tool/result" && result.data.text).toBe(
      "Error: create_goal can only be used in a turn that contains a direct request from the user",
    );
  });
});

describe("P6 /goal", () => {
  it("parses every form of the usage line", () => {
    expect(parseGoalCommand("/goal")).toEqual({ kind: "show" });
    expect(parseGoalCommand("/goal fix the build")).toEqual({ kind: "create", objective: "fix the build" });
    expect(parseGoalCommand("/goal edit ship v2")).toEqual({ kind: "edit", objective: "ship v2" });
    expect(parseGoalCommand("/goal clear")).toEqual({ kind: "clear" });
    expect(parseGoalCommand("/goal pause")).toEqual({ kind: "pause" });
    expect(parseGoalCommand("  /goal resume ")).toEqual({ kind: "resume" });
    expect(parseGoalCommand("/goal edit")).toEqual({ kind: "usage", message: GOAL_USAGE });
    expect(parseGoalCommand("/goal pause now")).toEqual({ kind: "usage", message: GOAL_USAGE });
    expect(parseGoalCommand("/goals")).toBeUndefined();
    expect(parseGoalCommand("hello")).toBeUndefined();
  });

  it("creating a goal arms it and starts round 1 when idle; the user can pause and resume", async () => {
    fixture = await planningFixture({
      plugins: planningPlugins({ checks: false, maxRounds: 3 }),
      script: (_request, index) =>
        index === 0 ? call("update_goal", { action: "pause" }) : { text: "Paused." },
    });
    const host = {
      goals: goalsOf(fixture),
      queueRound: () => driverOf(fixture).queueRound(),
      kick: () => fixture.agent.kick(),
      idle: true,
    };
    expect(await runGoalCommand(parseGoalCommand("/goal tidy the repo")!, host)).toBe(
      "Goal set: tidy the repo",
    );
    await fixture.agent.whenIdle();
    expect(userMessages(await fixture.events(), "goal-round")[0]).toContain("Round: 1/3");
    expect(await runGoalCommand({ kind: "show" }, host)).toBe(
      "Goal (paused, disarmed, round 1/3): tidy the repo",
    );
    fixture.fake.setScript(() => ({ text: "ok" }));
    expect(await runGoalCommand({ kind: "resume" }, host)).toBe("Goal resumed.");
    expect(goalsOf(fixture).armed).toBe(true);
    expect(await runGoalCommand({ kind: "clear" }, host)).toBe("Goal cleared.");
  });
});
