/**
 * The todo list as the log records it: the arguments of the newest `todo_write` call whose result was not an
 * error. The log is the truth, so this survives restarts and other processes; compaction carries it over
 * (context/compaction/reinjection.ts) and the open-todos check reads it (planning/continuation.ts).
 */
import type { LogEvent } from "../../log/events.js";

export type TodoEntry = { content: string; status: string };

export const TODO_TOOL = "todo_write";

/** The current todo list as the log records it, or undefined when the model never wrote one. */
export function todosFromLog(events: readonly LogEvent[]): TodoEntry[] | undefined {
  const failed = new Set<string>();
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === "tool/result" && event.data.name === TODO_TOOL && event.data.isError) {
      failed.add(event.data.callId);
    }
    if (event.type !== "tool/call" || event.data.name !== TODO_TOOL || failed.has(event.data.callId))
      continue;
    const todos = parseTodos(event.data.arguments);
    if (todos) return todos;
  }
  return undefined;
}

function parseTodos(argumentsText: string): TodoEntry[] | undefined {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed !== "object" || parsed === null || !("todos" in parsed)) return undefined;
    const list = parsed.todos;
    if (!Array.isArray(list)) return undefined;
    return list.flatMap((item: unknown) =>
      typeof item === "object" &&
      item !== null &&
      "content" in item &&
      "status" in item &&
      typeof item.content === "string" &&
      typeof item.status === "string"
        ? [{ content: item.content, status: item.status }]
        : [],
    );
  } catch {
    return undefined;
  }
}
