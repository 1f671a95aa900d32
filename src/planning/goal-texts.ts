/**
 * Every text the goal feature shows the model (P4, P5), in one place. Long texts are in our own words with
 * the seed's content; the short protocol strings are the seed's exactly: `<goal_round>`, `Round: N/MAX`,
 * `blocked requires at least 3 consecutive goal rounds; current round is N`,
 * `Goal reached its configured limit of N rounds.`
 */
import type { GoalSnapshot } from "../log/events.js";

/** P4: the follow-up that starts round N. The objective is JSON-quoted so it cannot break the frame. */
export function goalRoundText(objective: string, round: number, maxRounds: number): string {
  return [
    "<goal_round>",
    `Objective: ${JSON.stringify(objective)}`,
    `Round: ${round}/${maxRounds}`,
    "",
    "Keep working toward the objective in this session. The workspace, tool results and stored session state are the truth: check them rather than relying on what earlier messages said, which may be out of date. Make real progress and verify it. Before you call the objective done, collect evidence that all of it is achieved, read the current goal, and mark it complete. If work is left, leave the goal active for the next round. Before reporting a blocker, follow the goal-tool rules.",
    "</goal_round>",
  ].join("\n");
}

/** P5: the wrap-up after `update_goal complete`. */
export function goalCompleteText(objective: string): string {
  return [
    "<goal_complete>",
    `Objective: ${JSON.stringify(objective)}`,
    "The goal is marked complete, so this autonomous run ends now. Write your closing message to the user: give the outcome, summarise what was done and how it was checked, and point to the concrete results (files, commits or other artifacts). State only what earlier rounds and tool results in this session establish; if a detail is not in the session, say so rather than making it up. Mention anything the user should review or do next. Speak to the user directly. Call no more tools in this run; further work waits for the user's next instruction.",
    "</goal_complete>",
  ].join("\n");
}

/** P5: the wrap-up after `update_goal blocked`. */
export function goalBlockedText(objective: string, reason: string): string {
  return [
    "<goal_blocked>",
    `Objective: ${JSON.stringify(objective)}`,
    `Blocker: ${JSON.stringify(reason)}`,
    "The goal is marked blocked, so this autonomous run ends now. Write your closing message to the user: say what was completed, the concrete condition that blocks the rest, what you tried, and exactly what you need from the user to continue. State only what this session's tool results establish. Call no more tools in this run.",
    "</goal_blocked>",
  ].join("\n");
}

export const ROUND_LIMIT_REASON = "round-limit";

export function roundLimitText(maxRounds: number): string {
  return `Goal reached its configured limit of ${maxRounds} rounds.`;
}

export function blockedTooEarlyText(minRounds: number, round: number): string {
  return `blocked requires at least ${minRounds} consecutive goal rounds; current round is ${round}`;
}

export const CREATE_GOAL_DESCRIPTION =
  'Create a saved goal that keeps this session working through automatic continuation rounds until it is done. Use it when the human\'s direct request is a long-running objective, even if they did not say "goal"; do not use it for work that fits in one turn.';

export const GET_GOAL_DESCRIPTION =
  "Read this session's goal: objective, phase, rounds started and the round limit, and whether automatic rounds are armed.";

export const UPDATE_GOAL_DESCRIPTION =
  "Change this session's goal. `edit` replaces the objective; `pause` stops automatic rounds; `complete` marks the objective achieved (only with evidence); `blocked` reports that no progress is possible without the user (give `reason`). Only the user can resume a paused goal.";

export const CREATE_NEEDS_HUMAN =
  "create_goal can only be used in a turn that contains a direct request from the user";
export const CREATE_TOP_LEVEL_ONLY = "create_goal is not available to a delegated agent";
export const RESUME_BY_USER_ONLY = "only the user can resume a paused goal";
export const NO_GOAL = "this session has no goal";
export const GOAL_CHANGED =
  "the goal changed while this update was being made; read it with get_goal and retry";

/** `get_goal`'s JSON (P5). */
export function goalJson(goal: GoalSnapshot | undefined, armed: boolean): string {
  if (!goal) return JSON.stringify({ goal: null, activation: "disarmed" });
  return JSON.stringify({
    goal: {
      id: goal.id,
      revision: goal.revision,
      objective: goal.objective,
      phase: goal.phase,
      roundsStarted: goal.roundsStarted,
      maxGoalRounds: goal.maxRounds,
      ...(goal.blockedReason ? { blockedReason: goal.blockedReason } : {}),
    },
    activation: armed ? "armed" : "disarmed",
  });
}
