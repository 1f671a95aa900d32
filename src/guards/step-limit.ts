/**
 * L3: a turn has a step limit. A model that never stops calling tools would otherwise run until someone
 * kills it (the loop itself has no budget, as in DSH). The limit is high (`loop.max_steps_per_turn`, 200) so
 * it does not cut real work short, and reaching it is a resumable state, not completion: the turn ends
 * `blocked` before step N+1 calls the model, the work so far stays in the log, and a follow-up continues.
 *
 * Invariants:
 * - Only the pre-step hook decides; the loop has no branch for it (ARCHITECTURE "Layers").
 * - The person sees the turn's error (`STEP_LIMIT`, naming the key); the model sees a notice at the start
 *   of its next turn (an inject, so it never wakes an idle agent by itself).
 *
 * Model experience: at the next turn, a user message from the harness:
 *   "The harness stopped your previous turn after N steps (its step limit). What that turn did is kept.
 *   Before you continue, tell the user where the work stands."
 */
import type { Plugin } from "../loop/plugin.js";

export const STEP_LIMIT_CODE = "STEP_LIMIT";

export function stepLimitNotice(maxSteps: number): string {
  return `The harness stopped your previous turn after ${maxSteps} steps (its step limit). What that turn did is kept. Before you continue, tell the user where the work stands.`;
}

export function stepLimitPlugin(options: { maxStepsPerTurn: number }): Plugin {
  const max = options.maxStepsPerTurn;
  return {
    name: "step-limit",
    setup(ctx) {
      ctx.hooks.onWaterfall(
        "agent/pre-step",
        async (state) => {
          if (state.reject || state.step <= max) return state;
          await ctx.inbox.inject(stepLimitNotice(max), "turn-limit");
          return {
            ...state,
            reject: {
              code: STEP_LIMIT_CODE,
              reason: `the turn stopped after ${max} steps (loop.max_steps_per_turn); send a message to continue`,
            },
          };
        },
        { plugin: "step-limit" },
      );
    },
  };
}
