/**
 * The goal tools (P5): `create_goal`, `get_goal`, `update_goal`, over the `goals` service.
 *
 * Model-visible strings: the descriptions and refusals in ./goal-texts.ts; results are the goal as JSON
 * (`{goal:{id,revision,objective,phase,roundsStarted,maxGoalRounds,blockedReason?},activation}`).
 * `create_goal` works only in a turn with direct human input, on a top-level agent.
 */

import { type Static, StringEnum, Type, toolParameters } from "../tools/schema.js";
import type { ToolDefinition, ToolExec, ToolOutput } from "../tools/types.js";
import type { GoalService } from "./goal-service.js";
import {
  CREATE_GOAL_DESCRIPTION,
  CREATE_NEEDS_HUMAN,
  CREATE_TOP_LEVEL_ONLY,
  GET_GOAL_DESCRIPTION,
  goalJson,
  UPDATE_GOAL_DESCRIPTION,
} from "./goal-texts.js";

function errorText(text: string, code: string): ToolOutput {
  return { text: `Error: ${text}`, isError: true, code };
}

const goalsOf = (exec: ToolExec): GoalService => exec.services.require("goalService");

const CreateGoalSchema = Type.Object(
  {
    objective: Type.String({ minLength: 1, description: "The objective, in full." }),
  },
  { additionalProperties: false },
);

export const createGoalTool: ToolDefinition<Static<typeof CreateGoalSchema>> = {
  name: "create_goal",
  toolset: "goal",
  description: CREATE_GOAL_DESCRIPTION,
  parameters: toolParameters(CreateGoalSchema),
  isAvailable: ({ session }) => session.kind === "main" && session.depth === 0,
  async execute(args, exec) {
    if (exec.session.kind !== "main" || exec.session.depth > 0)
      return errorText(CREATE_TOP_LEVEL_ONLY, "TOP_LEVEL_ONLY");
    const goals = goalsOf(exec);
    if (!goals.humanInputThisTurn()) return errorText(CREATE_NEEDS_HUMAN, "NEEDS_HUMAN_INPUT");
    const goal = await goals.create(args.objective);
    return { text: goalJson(goal, goals.armed) };
  },
};

const GetGoalSchema = Type.Object({}, { additionalProperties: false });

export const getGoalTool: ToolDefinition<Static<typeof GetGoalSchema>> = {
  name: "get_goal",
  toolset: "goal",
  description: GET_GOAL_DESCRIPTION,
  parameters: toolParameters(GetGoalSchema),
  concurrency: "safe",
  readOnly: true,
  async execute(_args, exec) {
    const goals = goalsOf(exec);
    return { text: goalJson(await goals.get(), goals.armed) };
  },
};

const UpdateGoalSchema = Type.Object(
  {
    action: StringEnum(["edit", "pause", "resume", "complete", "blocked"]),
    objective: Type.Optional(Type.String({ description: "The new objective (edit)." })),
    reason: Type.Optional(Type.String({ description: "The concrete blocking condition (blocked)." })),
  },
  { additionalProperties: false },
);

export const updateGoalTool: ToolDefinition<Static<typeof UpdateGoalSchema>> = {
  name: "update_goal",
  toolset: "goal",
  description: UPDATE_GOAL_DESCRIPTION,
  parameters: toolParameters(UpdateGoalSchema),
  async execute(args, exec) {
    const goals = goalsOf(exec);
    const details = {
      ...(args.objective !== undefined ? { objective: args.objective } : {}),
      ...(args.reason !== undefined ? { reason: args.reason } : {}),
    };
    const goal = await goals.update(args.action, "model", details);
    return { text: goalJson(goal, goals.armed) };
  },
};

export const goalTools = [createGoalTool, getGoalTool, updateGoalTool];
