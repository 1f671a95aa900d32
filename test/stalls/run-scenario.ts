/**
 * Runs one stall scenario end to end, as `bdsh run` (or `bdsh run --goal`) would: a real SQLite store, the
 * fake provider over HTTP, the goal plugin always (DSH's mechanism), and the §9 checks on or off.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runHeadless } from "../../src/loop/headless.js";
import type { GoalService } from "../../src/planning/goal-service.js";
import { planningFixture, planningPlugins, userMessages } from "../planning/fixture.js";
import { Conversation, type Scenario } from "./scenarios.js";

export type StallOutcome = {
  scenario: string;
  checks: boolean;
  reached: boolean;
  requests: number;
  nudges: number;
  rounds: number;
  exitCode: number;
};

const OBJECTIVE = "Fix the bug so the tests pass.";

export async function runScenario(scenario: Scenario, checks: boolean): Promise<StallOutcome> {
  const home = mkdtempSync(join(tmpdir(), "bdsh-stall-"));
  const fixed = new Set<string>();
  const fixture = await planningFixture({
    home,
    script: (request) => scenario.reply(new Conversation(request)),
    plugins: planningPlugins({ checks, maxRounds: 8 }),
    tools: {
      make_fix: {
        run: (args) => {
          fixed.add(String(args.part));
          return { text: `fixed ${String(args.part)}` };
        },
      },
      todo_write: { run: () => ({ text: "Updated todo list." }) },
    },
  });
  try {
    const goals = fixture.agent.services.require("goalService") as GoalService;
    if (scenario.goal) await goals.create(OBJECTIVE);
    const result = await runHeadless(fixture.agent, OBJECTIVE);
    const events = await fixture.events();
    const goal = await goals.get();
    const reached =
      scenario.parts.every((p) => fixed.has(p)) && (!scenario.goal || goal?.phase === "complete");
    return {
      scenario: scenario.name,
      checks,
      reached,
      requests: fixture.fake.requests.length,
      nudges: userMessages(events, "continuation").length,
      rounds: userMessages(events, "goal-round").length,
      exitCode: result.exitCode,
    };
  } finally {
    await fixture.close();
    rmSync(home, { recursive: true, force: true });
  }
}
