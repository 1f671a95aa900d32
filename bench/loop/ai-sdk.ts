/**
 * The AI SDK's tool loop: `streamText` with an `@ai-sdk/openai-compatible` model pointed at a fresh fake
 * provider, one `noop` tool, `stopWhen: stepCountIs(250)`, the stream consumed fully. Per-step marks are
 * the `onStepFinish` timestamps (an interval between two of them is one whole step).
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { stepCountIs, streamText, tool } from "ai";
import { z } from "zod";
import { type FakeReply, startFakeProvider } from "../../testing/fake-provider/index.js";
import { NOOP_DESCRIPTION, type SessionRun, StepMarks } from "./common.js";

export async function runAiSdk(script: readonly FakeReply[]): Promise<SessionRun> {
  const fake = await startFakeProvider({ script });
  try {
    const provider = createOpenAICompatible({ baseURL: fake.url, name: "x", apiKey: "x" });
    const marks = new StepMarks();
    const result = streamText({
      model: provider.chatModel("deepseek-flash"),
      system: "You are a bench agent.",
      prompt: "Call noop until told otherwise.",
      tools: {
        noop: tool({
          description: NOOP_DESCRIPTION,
          inputSchema: z.object({ n: z.number() }),
          execute: async ({ n }) => `ok ${n}`,
        }),
      },
      stopWhen: stepCountIs(250),
      maxRetries: 0,
      onStepFinish: () => {
        marks.mark();
      },
    });
    for await (const part of result.fullStream) {
      if (part.type === "error") throw part.error;
    }
    const finish = await result.finishReason;
    if (finish !== "stop") throw new Error(`AI SDK: session finished with ${finish}`);
    return { marks, requests: fake.requests.length };
  } finally {
    await fake.close();
  }
}
