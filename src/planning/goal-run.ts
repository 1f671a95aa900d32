/**
 * `bdsh run --goal OBJECTIVE` (P3–P5, INTERFACE): create and arm the session's goal before the objective is
 * sent as the first human message; goal rounds continue on every idle until the goal is complete, blocked
 * or out of rounds. The exit code is 0 only when the goal ended complete.
 */
import type { Agent } from "../loop/agent.js";
import type { GoalRow } from "../store/planning-rows.js";

export class GoalRunError extends Error {
  readonly code = "USAGE";
}

export async function armGoal(agent: Agent, objective: string): Promise<GoalRow> {
  const goals = agent.api("goalService");
  if (!goals) throw new GoalRunError("--goal needs the goal plugin (the standard preset has it)");
  return goals.create(objective);
}

/** 0 when the goal is complete; otherwise 1, with the reason. */
export async function goalOutcome(agent: Agent): Promise<{ exitCode: 0 | 1; message?: string }> {
  const goal = await agent.api("goalService")?.get();
  if (goal?.phase === "complete") return { exitCode: 0 };
  const detail = goal?.blockedReason ? `: ${goal.blockedReason}` : "";
  return { exitCode: 1, message: `the goal ended ${goal?.phase ?? "missing"}${detail}` };
}
