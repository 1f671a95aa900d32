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
  /** Writes the goal's events to the log now (before a round another server could claim). */
  commit?(): Promise<void>;
  readonly idle: boolean;
};

/** Applies a command; returns the line to show the user. */
export async function runGoalCommand(command: GoalCommand, host: GoalCommandHost): Promise<string> {
  let queued = false;
  const queueRound = async () => {
    await host.commit?.(); // armed in the log before the round is visible to any server
    queued = (await host.queueRound()) !== undefined;
  };
  try {
    return await applyGoalCommand(command, host.goals, host.idle, queueRound);
  } catch (error) {
    if (error instanceof GoalRefusal) return error.message;
    throw error;
  } finally {
    await host.commit?.(); // the round's event too; then the drive (a commit waits for a drive to end)
    if (queued) host.kick();
  }
}

async function applyGoalCommand(
  command: GoalCommand,
  goals: GoalService,
  idle: boolean,
  queueRound: () => Promise<void>,
): Promise<string> {
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
      if (idle) await queueRound();
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
      if (idle) await queueRound();
      return "Goal resumed.";
    }
  }
}
