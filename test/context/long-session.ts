/**
 * The scripted long session (issue 6 item 12, bench/context): one turn of `steps` tool steps against the fake
 * provider with a small window, so compaction runs several times. The model writes a todo list first,
 * updates it every 100 steps, calls a `work` tool (sometimes two in parallel) that returns ~2 KB, and
 * ends with text. Summary calls are recognised by their `x-bdsh-purpose: compaction` header.
 */
import { compactionPlugin } from "../../src/context/compaction/plugin.js";
import type { Plugin } from "../../src/loop/plugin.js";
import { type TodoItem, todoWriteTool } from "../../src/tools/todo/todo-tool.js";
import type { FakeReply, FakeRequest } from "../../testing/fake-provider/index.js";
import { type LoopFixture, loopFixture, personaPlugin } from "../loop/harness.js";

export const GOAL = { objective: "finish the 300-step migration", phase: "active" };

export const goalServicePlugin: Plugin = {
  name: "test-goals",
  setup(ctx) {
    ctx.provide("goals", { active: async () => GOAL });
  },
};

function todos(step: number): TodoItem[] {
  const phase = Math.floor(step / 100);
  return ["survey the modules", "migrate the modules", "verify the migration"].map((content, i) => ({
    content,
    status: i < phase ? "completed" : i === phase ? "in_progress" : "pending",
  }));
}

export function isSummaryRequest(request: FakeRequest): boolean {
  return request.headers["x-bdsh-purpose"] === "compaction";
}

export type LongSession = { fixture: LoopFixture; workRequests: () => FakeRequest[] };

export async function longSession(options: { steps: number; databaseUrl?: string }): Promise<LongSession> {
  let work = 0;
  const script = (request: FakeRequest): FakeReply => {
    if (isSummaryRequest(request)) {
      return {
        text: `## Primary Request and Intent\n- migrate the modules (checkpoint at step ${work})\n## Next Step\n- continue`,
      };
    }
    work++;
    if (work >= options.steps) return { text: "All done." };
    if (work === 1 || work % 100 === 0) {
      return { toolCalls: [{ id: `todo-${work}`, name: "todo_write", arguments: { todos: todos(work) } }] };
    }
    if (work % 7 === 0) {
      return {
        toolCalls: [
          { id: `w${work}a`, name: "work", arguments: { n: work } },
          { id: `w${work}b`, name: "work", arguments: { n: work } },
        ],
      };
    }
    return {
      reasoning: "next module",
      toolCalls: [{ id: `w${work}`, name: "work", arguments: { n: work } }],
    };
  };
  const fixture = await loopFixture({
    script: (request) => script(request),
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
    plugins: [personaPlugin, goalServicePlugin, compactionPlugin({ headroomTokens: 2_000 })],
    tools: {
      work: {
        concurrency: "safe",
        run: (args) => ({ text: `module ${String(args.n)} migrated\n${"log line\n".repeat(220)}` }),
      },
      todo_write: { run: (args, exec) => todoWriteTool.execute(args as { todos: TodoItem[] }, exec) },
    },
    agent: {
      model: {
        provider: "deepseek",
        id: "deepseek-flash",
        effort: "high",
        contextWindow: 40_000,
        maxOutputTokens: 4_000,
        systemPromptUpdate: "in-history",
      },
    },
  });
  return { fixture, workRequests: () => fixture.fake.requests.filter((r) => !isSummaryRequest(r)) };
}

/** Fraction of the previous request's messages that the next one repeats unchanged, per step. */
export function prefixReuse(requests: readonly FakeRequest[]): number[] {
  const ratios: number[] = [];
  for (let i = 1; i < requests.length; i++) {
    const before = (requests[i - 1]!.body?.messages as unknown[]) ?? [];
    const after = (requests[i]!.body?.messages as unknown[]) ?? [];
    let same = 0;
    while (same < before.length && JSON.stringify(before[same]) === JSON.stringify(after[same])) same++;
    ratios.push(before.length === 0 ? 1 : same / before.length);
  }
  return ratios;
}
