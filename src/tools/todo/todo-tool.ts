/**
 * `todo_write` (P1): the whole list on every call, replacing the previous one.
 * Result: `Updated todo list: <p> pending, <i> in progress, <c> completed.` Empty or duplicate content is
 * rejected. Several `in_progress` items are allowed (allowParallelInProgress). The list goes to the
 * `todos` service when there is one (UI projection, the loop's end-of-turn nudge). Details: the whole list.
 */

import { type Static, StringEnum, Type, toolParameters } from "../schema.js";
import type { ToolDefinition, ToolOutput } from "../types.js";

export type TodoStatus = "pending" | "in_progress" | "completed";
export type TodoItem = { content: string; status: TodoStatus };

export interface TodoList {
  replace(items: readonly TodoItem[]): void;
  current(): readonly TodoItem[];
}

declare module "../types.js" {
  interface ToolServiceMap {
    todos: TodoList;
  }
}

export class MemoryTodoList implements TodoList {
  private items: readonly TodoItem[] = [];
  replace(items: readonly TodoItem[]): void {
    this.items = items.map((item) => ({ ...item }));
  }
  current(): readonly TodoItem[] {
    return this.items;
  }
}

const TodoWriteSchema = Type.Object(
  {
    todos: Type.Array(
      Type.Object(
        {
          content: Type.String({ description: "The step, in a few words." }),
          status: StringEnum(["pending", "in_progress", "completed"]),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const todoWriteTool: ToolDefinition<Static<typeof TodoWriteSchema>> = {
  name: "todo_write",
  toolset: "planning",
  description:
    "Keep a task list to plan multi-step work and show progress; skip it for trivial one-step tasks. Before starting, add one todo per concrete step. While work remains, keep the todos you are working on `in_progress` (several only when the work really runs in parallel). Mark each todo `completed` as soon as it is done. Every call sends the whole list.",
  parameters: toolParameters(TodoWriteSchema),
  concurrency: "exclusive",
  async execute(args, exec): Promise<ToolOutput> {
    const seen = new Set<string>();
    for (const [index, item] of args.todos.entries()) {
      const content = item.content.trim();
      if (content === "") throw new Error(`todos[${index}].content must not be empty`);
      if (seen.has(content)) throw new Error(`duplicate todo content: "${content}"`);
      seen.add(content);
    }
    exec.services.get("todos")?.replace(args.todos);
    const count = (status: TodoStatus) => args.todos.filter((item) => item.status === status).length;
    return {
      text: `Updated todo list: ${count("pending")} pending, ${count("in_progress")} in progress, ${count("completed")} completed.`,
      details: {
        kind: "todos",
        items: args.todos.map((item) => ({ content: item.content, status: item.status })),
      },
    };
  },
};
