/**
 * The stall suite (issue 7 item 7, §9): each scripted stall, with the continuation checks on, reaches its
 * objective; a genuinely finished run makes no extra request. With the checks off, the same runs show what
 * DSH's mechanisms (goal rounds) achieve alone — bench/stalls prints both.
 */
import { describe, expect, it } from "vitest";
import { runScenario } from "./run-scenario.js";
import { SCENARIOS } from "./scenarios.js";

describe("§9 stall suite, checks on", () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: reaches the objective${scenario.finishesAlone ? " with no extra request" : ""}`, async () => {
      const outcome = await runScenario(scenario, true);
      expect(outcome.reached).toBe(true);
      expect(outcome.exitCode).toBe(0);
      if (scenario.finishesAlone) {
        expect(outcome.nudges).toBe(0);
        expect(outcome.rounds).toBe(0);
        expect(outcome.requests).toBe(scenario.parts.length + 1 + (scenario.goal ? 1 : 0));
      }
    });
  }
});

describe("§9 stall suite, checks off (DSH alone)", () => {
  const expected: Record<string, boolean> = {
    "announce-and-stop": false,
    "announce-and-stop under a goal": true, // P4: the next round picks it up
    "reasoning-only reply": false,
    "blank reply": false,
    "length stop mid-tool-call": false,
    "length stop under a goal": false, // P4: a max-tokens turn end disarms the goal
    "todos left open": false,
    "premature blocked at round 1": true, // P5: blocked refused before 3 rounds
    "early done with the objective unmet": true, // P4
    "truly finishes": true,
    "truly finishes under a goal": true,
  };
  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: ${expected[scenario.name] ? "reached" : "not reached"} without the checks`, async () => {
      const outcome = await runScenario(scenario, false);
      expect(outcome.nudges).toBe(0);
      expect(outcome.reached).toBe(expected[scenario.name]);
    });
  }
});
