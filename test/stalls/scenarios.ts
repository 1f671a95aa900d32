/**
 * The stall suite's scripted models (issue 7 item 7, §9): each scenario is a model that stalls in one
 * known way and then, when prompted again, does the work. The script reads the conversation from the
 * request body (OpenAI Chat format), so it answers the same way whatever nudged it: a continuation check,
 * a goal round, or nothing at all.
 *
 * The objective of every scenario is concrete: the `make_fix` tool ran for every listed part (and, in a
 * goal run, the goal is complete).
 */
import type { FakeReply, FakeRequest } from "../../testing/fake-provider/index.js";

type Message = {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
};

/** What the scripted model "remembers": the conversation in the request. */
export class Conversation {
  readonly messages: Message[];
  constructor(request: FakeRequest) {
    this.messages = (request.body?.messages as Message[] | undefined) ?? [];
  }
  calls(name: string): Record<string, unknown>[] {
    return this.messages.flatMap((m) =>
      (m.tool_calls ?? [])
        .filter((c) => c.function.name === name)
        .map((c) => JSON.parse(c.function.arguments || "{}") as Record<string, unknown>),
    );
  }
  fixed(part: string): boolean {
    return this.calls("make_fix").some((args) => args.part === part);
  }
  get last(): Message | undefined {
    return this.messages.at(-1);
  }
  /** User messages so far (the task, nudges, rounds). */
  get prompts(): number {
    return this.messages.filter((m) => m.role === "user").length;
  }
  /** Assistant replies so far. */
  get replies(): number {
    return this.messages.filter((m) => m.role === "assistant").length;
  }
  lastUserText(): string {
    const user = [...this.messages].reverse().find((m) => m.role === "user");
    return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
  }
}

let ids = 0;
const call = (name: string, args: Record<string, unknown>): FakeReply => ({
  reasoning: "Acting on it.",
  toolCalls: [{ id: `call-${++ids}`, name, arguments: args }],
});
const say = (text: string): FakeReply => ({ text });

export type Scenario = {
  name: string;
  /** Run with a goal armed (as `bdsh run --goal`), or as a plain `bdsh run`. */
  goal: boolean;
  parts: string[];
  /** The stall, then the honest work. */
  reply(conversation: Conversation): FakeReply;
  /** A genuinely finished run: no extra request is allowed. */
  finishesAlone?: boolean;
};

/** After the work: mark the goal complete (goal runs), then a closing message. */
function finish(c: Conversation, goal: boolean, closing: string): FakeReply {
  if (goal && c.calls("update_goal").every((a) => a.action !== "complete"))
    return call("update_goal", { action: "complete" });
  return say(closing);
}

function fixAll(c: Conversation, parts: string[], goal: boolean): FakeReply {
  const next = parts.find((p) => !c.fixed(p));
  return next
    ? call("make_fix", { part: next })
    : finish(c, goal, "Done. The fix is applied and the tests pass.");
}

function stallFirst(name: string, goal: boolean, stall: FakeReply): Scenario {
  return {
    name,
    goal,
    parts: ["parser"],
    // Deterministic: the same conversation gets the same stall (a retry on the same history does not help).
    reply: (c) => (c.replies === 0 && c.prompts === 1 ? stall : fixAll(c, ["parser"], goal)),
  };
}

export const SCENARIOS: Scenario[] = [
  stallFirst("announce-and-stop", false, say("I found the bug in parse.ts. Now I'll apply the fix.")),
  stallFirst("announce-and-stop under a goal", true, say("I found the bug. Let me fix the parser.")),
  stallFirst("reasoning-only reply", false, { reasoning: "The parser needs the fix; I will apply it." }),
  stallFirst("blank reply", false, say(" \n\n ")),
  stallFirst("length stop mid-tool-call", false, {
    text: "Writing the fix.",
    toolCalls: [{ id: "cut-1", name: "make_fix", arguments: '{"part": "par' }],
    finish: "length",
  }),
  stallFirst("length stop under a goal", true, {
    text: "Writing the fix.",
    toolCalls: [{ id: "cut-2", name: "make_fix", arguments: '{"part": "par' }],
    finish: "length",
  }),
  {
    name: "todos left open",
    goal: false,
    parts: ["parser", "printer"],
    reply(c) {
      const todos = c.calls("todo_write");
      if (todos.length === 0)
        return call("todo_write", {
          todos: [
            { content: "fix the parser", status: "in_progress" },
            { content: "fix the printer", status: "pending" },
          ],
        });
      if (!c.fixed("parser")) return call("make_fix", { part: "parser" });
      if (!c.fixed("printer") && c.last?.role === "tool") return say("I fixed the parser.");
      if (!c.fixed("printer")) return call("make_fix", { part: "printer" });
      if (todos.length === 1)
        return call("todo_write", {
          todos: [
            { content: "fix the parser", status: "completed" },
            { content: "fix the printer", status: "completed" },
          ],
        });
      return say("Both fixes are in and the list is complete.");
    },
  },
  {
    name: "premature blocked at round 1",
    goal: true,
    parts: ["parser"],
    reply: (c) =>
      c.replies === 0
        ? call("update_goal", { action: "blocked", reason: "I cannot reproduce the bug." })
        : fixAll(c, ["parser"], true),
  },
  stallFirst("early done with the objective unmet", true, say("Done.")),
  {
    name: "truly finishes",
    goal: false,
    parts: ["parser"],
    finishesAlone: true,
    reply: (c) => fixAll(c, ["parser"], false),
  },
  {
    name: "truly finishes under a goal",
    goal: true,
    parts: ["parser"],
    finishesAlone: true,
    reply: (c) => fixAll(c, ["parser"], true),
  },
];
