/**
 * pi-agent-core's loop: its `Agent` with a pi-ai `openai-completions` model object pointed at a fresh fake
 * provider and one `noop` tool. A pi "turn" is one model call plus its tool executions, so the per-step
 * marks are its `turn_start` events.
 */
import { Agent, type AgentTool } from "@mariozechner/pi-agent-core";
import { type Model, Type } from "@mariozechner/pi-ai";
import { type FakeReply, startFakeProvider } from "../../testing/fake-provider/index.js";
import { NOOP_DESCRIPTION, type SessionRun, StepMarks } from "./common.js";

const noopParameters = Type.Object({ n: Type.Number() });

const noop: AgentTool<typeof noopParameters> = {
  name: "noop",
  label: "noop",
  description: NOOP_DESCRIPTION,
  parameters: noopParameters,
  execute: async (_id, params) => ({ content: [{ type: "text", text: `ok ${params.n}` }], details: {} }),
};

export async function runPi(script: readonly FakeReply[]): Promise<SessionRun> {
  const fake = await startFakeProvider({ script });
  try {
    const model: Model<"openai-completions"> = {
      id: "deepseek-flash",
      name: "bench",
      api: "openai-completions",
      provider: "bench",
      baseUrl: fake.url,
      reasoning: true,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 1_048_576,
      maxTokens: 32_768,
    };
    const agent = new Agent({
      initialState: { systemPrompt: "You are a bench agent.", model, tools: [noop] },
      getApiKey: () => "x",
    });
    const marks = new StepMarks();
    agent.subscribe((event) => {
      if (event.type === "turn_start") marks.mark();
    });
    await agent.prompt("Call noop until told otherwise.");
    await agent.waitForIdle();
    if (agent.state.errorMessage) throw new Error(`pi-agent-core: ${agent.state.errorMessage}`);
    const last = agent.state.messages.at(-1);
    if (last?.role !== "assistant" || last.stopReason !== "stop") {
      throw new Error(`pi-agent-core: session ended on ${last?.role}`);
    }
    return { marks, requests: fake.requests.length };
  } finally {
    await fake.close();
  }
}
