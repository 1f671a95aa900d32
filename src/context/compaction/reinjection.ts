/**
 * Beyond DSH (C5 "Here"): after a compaction, the task state comes back as one user message, so the model
 * does not fall back to an earlier task. The todo list otherwise lives only in old `todo_write` arguments
 * and the goal in the goal service; the summary alone may blur both.
 *
 * - Todos: the arguments of the newest `todo_write` call whose result was not an error, read from the log
 *   (the log is the truth: this survives restarts and other processes).
 * - Goal: the `goals` plugin API's `active()` (the goal service; only `active()` is needed here).
 *
 * Model experience:
 *   <system-reminder>
 *   Task state carried over from before the checkpoint above. It is current; rely on it over anything older.
 *   Active goal (<phase>): <objective>
 *   Todo list:
 *   - [in_progress] <content>
 *   </system-reminder>
 */
import type { TodoEntry } from "../../tools/todo/todos-from-log.js";

export type ActiveGoal = { objective: string; phase: string };

/** What compaction needs from the goal service; kept minimal on purpose. */
export interface GoalReader {
  active(): Promise<ActiveGoal | undefined>;
}

declare module "../../loop/plugin.js" {
  interface PluginApiMap {
    goals: GoalReader;
  }
}

export function taskStateText(
  todos: readonly TodoEntry[] | undefined,
  goal: ActiveGoal | undefined,
): string | undefined {
  const lines: string[] = [];
  if (goal) lines.push(`Active goal (${goal.phase}): ${goal.objective}`);
  if (todos && todos.length > 0) {
    lines.push("Todo list:");
    for (const todo of todos) lines.push(`- [${todo.status}] ${todo.content}`);
  }
  if (lines.length === 0) return undefined;
  return [
    "<system-reminder>",
    "Task state carried over from before the checkpoint above. It is current; rely on it over anything older.",
    ...lines,
    "</system-reminder>",
  ].join("\n");
}
