/**
 * `/goal` in chat (P6): `Usage: /goal [<objective>|clear|edit <objective>|pause|resume]`. The parser is a
 * pure function; `runGoalCommand` applies a parsed command to an agent's goal service. Creating a goal arms
 * it and queues round 1 when the agent is idle; `resume` (the user's, never the model's) re-arms it.
 *
 * User-visible strings: GOAL_USAGE and the one-line answers of `runGoalCommand`.
 */
import { GoalRefusal, type GoalService } from "./goal-service.js";

export const GOAL_USAGE = "Usage: /goal [<objective>|clear|edit <objective>|pause|resume]";

export type GoalCommand =
  | { kind: "show" }
  | { kind: "create"; objective: string }
  | { kind: "edit"; objective: string }
  | { kind: "clear" }
  | { kind: "pause" }
  | { kind: "resume" }
  | { kind: "usage"; message: string };

/** Parses a line that starts with `/goal`; undefined when the line is not a `/goal` command. */
export function parseGoalCommand(line: string): GoalCommand | undefined {
  const match = /^\/goal(?:\s+([\s\S]*))?$/.exec(line.trim());
  if (!match) return undefined;
  const rest = (match[1] ?? "").trim();
  if (rest === "") return { kind: "show" };
  const [word = "", ...tail] = rest.split(/\s+/);
  const argument = rest.slice(word.length).trim();
  switch (word) {
    case "clear":
    case "pause":
    case "resume":
      return tail.length === 0 ? { kind: word } : { kind: "usage", message: GOAL_USAGE };
    case "edit":
      return argument ? { kind: "edit", objective: argument } : { kind: "usage", message: GOAL_USAGE };
    default:
      return { kind: "create", objective: rest };
  }
}

export type GoalCommandHost = {
  goals: GoalService;
  /** Queues round 1 now (the driver of this agent); returns the round claimed. */
  queueRound(): Promise<number | undefined>;
  /** Starts the agent if input is pending. */
  kick(): void;
  readonly idle: boolean;
};

/** Applies a command; returns the line to show the user. */
export async function runGoalCommand(command: GoalCommand, host: GoalCommandHost): Promise<string> {
  const { goals } = host;
  try {
    switch (command.kind) {
      case "usage":
        return command.message;
      case "show": {
        const goal = await goals.get();
        if (!goal) return `No goal. ${GOAL_USAGE}`;
        const state = goals.armed ? "armed" : "disarmed";
        return `Goal (${goal.phase}, ${state}, round ${goal.roundsStarted}/${goal.maxRounds}): ${goal.objective}`;
      }
      case "create": {
        await goals.create(command.objective);
        if (host.idle && (await host.queueRound()) !== undefined) host.kick();
        return `Goal set: ${command.objective}`;
      }
      case "edit":
        await goals.update("edit", "user", { objective: command.objective });
        return `Goal updated: ${command.objective}`;
      case "clear":
        return (await goals.clear()) ? "Goal cleared." : "No goal to clear.";
      case "pause":
        await goals.update("pause", "user");
        return "Goal paused.";
      case "resume": {
        await goals.update("resume", "user");
        if (host.idle && (await host.queueRound()) !== undefined) host.kick();
        return "Goal resumed.";
      }
    }
  } catch (error) {
    if (error instanceof GoalRefusal) return error.message;
    throw error;
  }
}
