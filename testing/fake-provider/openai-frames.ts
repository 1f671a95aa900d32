/**
 * Renders a `FakeReply` as OpenAI Chat Completions SSE frames, shaped like DeepSeek's: a role chunk,
 * reasoning and content deltas, tool-call deltas by index, a finish chunk, a usage chunk, `[DONE]`.
 */
import { argumentText, type FakeReply, pieces } from "./script.js";

export function openAiFrames(reply: FakeReply, model: string): string[] {
  const size = reply.chunkSize ?? 7;
  const chunk = (choice: Record<string, unknown> | undefined, usage?: Record<string, unknown>): string => {
    const payload = {
      id: "fake-chatcmpl",
      object: "chat.completion.chunk",
      created: 0,
      model,
      choices: choice ? [{ index: 0, logprobs: null, ...choice }] : [],
      ...(usage ? { usage } : {}),
    };
    return `data: ${JSON.stringify(payload)}\n\n`;
  };
  const frames = [chunk({ delta: { role: "assistant", content: "" }, finish_reason: null })];
  const field = reply.reasoningField ?? "reasoning_content";
  for (const piece of pieces(reply.reasoning ?? "", size)) {
    frames.push(chunk({ delta: { [field]: piece }, finish_reason: null }));
  }
  for (const piece of pieces(reply.text ?? "", size)) {
    frames.push(chunk({ delta: { content: piece }, finish_reason: null }));
  }
  (reply.toolCalls ?? []).forEach((call, index) => {
    const head = { index, type: "function", function: { name: call.name, arguments: "" } };
    frames.push(
      chunk({
        delta: { tool_calls: [call.id === undefined ? head : { ...head, id: call.id }] },
        finish_reason: null,
      }),
    );
    for (const piece of pieces(argumentText(call), size)) {
      frames.push(
        chunk({ delta: { tool_calls: [{ index, function: { arguments: piece } }] }, finish_reason: null }),
      );
    }
  });
  const finish =
    reply.finish === undefined ? (reply.toolCalls?.length ? "tool_calls" : "stop") : reply.finish;
  if (finish !== null) frames.push(chunk({ delta: {}, finish_reason: finish }));
  const u = reply.usage ?? {};
  const cacheRead = u.cacheRead ?? 0;
  frames.push(
    chunk(undefined, {
      prompt_tokens: (u.input ?? 10) + cacheRead + (u.cacheWrite ?? 0),
      completion_tokens: u.output ?? 5,
      total_tokens: (u.input ?? 10) + cacheRead + (u.output ?? 5),
      prompt_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: u.cacheWrite ?? 0 },
    }),
  );
  frames.push("data: [DONE]\n\n");
  return frames;
}
