/**
 * A recorded-style OpenAI Chat Completions stream of a chosen size, shaped like DeepSeek's real frames
 * (../shared/fixtures/provider-streams/deepseek-tool-call.sse): a long reasoning, a visible answer, then one
 * large tool call (a file write) whose JSON arguments arrive in small pieces that split escapes, and a final
 * usage chunk. Deterministic: the same size gives the same bytes.
 */

export type BenchStream = {
  bytes: Buffer;
  frames: number;
  reasoningChars: number;
  textChars: number;
  /** The complete tool-call argument text. */
  argumentsText: string;
};

const WORDS =
  "the parser reads each frame and the assembler keeps reasoning text and tool arguments in order while the loop waits for the next step of the plan".split(
    " ",
  );

export function buildStream(targetBytes: number, withToolCall = true): BenchStream {
  const frames: string[] = [];
  let size = 0;
  const envelope = (delta: Record<string, unknown>, finish: string | null = null): string => {
    const chunk = {
      id: "cca85624-4056-401f-b220-d77601d1f70d",
      object: "chat.completion.chunk",
      created: 1764664568,
      model: "deepseek-reasoner",
      system_fingerprint: "fp_eaab8d114b_prod0820_fp8_kvcache",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: null,
    };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  };
  const push = (frame: string): void => {
    frames.push(frame);
    size += Buffer.byteLength(frame);
  };
  let word = 0;
  const token = (): string => ` ${WORDS[word++ % WORDS.length]}`;

  push(envelope({ role: "assistant", content: null, reasoning_content: "" }));
  let reasoningChars = 0;
  while (size < targetBytes * (withToolCall ? 0.4 : 0.6)) {
    const piece = token();
    reasoningChars += piece.length;
    push(envelope({ content: null, reasoning_content: piece }));
  }
  let textChars = 0;
  while (size < targetBytes * (withToolCall ? 0.5 : 1) - 1_000) {
    const piece = token();
    textChars += piece.length;
    push(envelope({ content: piece, reasoning_content: null }));
  }
  if (!withToolCall) return finish(frames, push, envelope, "stop", reasoningChars, textChars, "");
  push(
    envelope({
      tool_calls: [
        { index: 0, id: "call_00_bench", type: "function", function: { name: "write", arguments: "" } },
      ],
    }),
  );
  // The file body: code-like lines with quotes, backslashes and newlines, so pieces split escapes.
  const line = 'export const value = "a \\"quoted\\" string";\n\tif (x) { return y + "\\n"; }\n';
  const piece = 24;
  const frameBytes = Buffer.byteLength(
    envelope({ tool_calls: [{ index: 0, function: { arguments: "x".repeat(piece) } }] }),
  );
  const tail = 1_000;
  const argumentFrames = Math.max(1, Math.floor((targetBytes - size - tail) / frameBytes));
  let content = "";
  while (content.length * 1.15 < argumentFrames * piece) content += line;
  const argumentsText = JSON.stringify({ path: "src/generated.ts", content });
  for (let at = 0; at < argumentsText.length; at += piece) {
    push(
      envelope({ tool_calls: [{ index: 0, function: { arguments: argumentsText.slice(at, at + piece) } }] }),
    );
  }
  return finish(frames, push, envelope, "tool_calls", reasoningChars, textChars, argumentsText);
}

function finish(
  frames: string[],
  push: (frame: string) => void,
  envelope: (delta: Record<string, unknown>, finish: string | null) => string,
  reason: string,
  reasoningChars: number,
  textChars: number,
  argumentsText: string,
): BenchStream {
  push(envelope({ content: "", reasoning_content: null }, reason));
  const usage = {
    id: "cca85624-4056-401f-b220-d77601d1f70d",
    object: "chat.completion.chunk",
    created: 1764664568,
    model: "deepseek-reasoner",
    choices: [],
    usage: {
      prompt_tokens: 339,
      completion_tokens: 183_000,
      total_tokens: 183_339,
      prompt_tokens_details: { cached_tokens: 320 },
    },
  };
  push(`data: ${JSON.stringify(usage)}\n\n`);
  push("data: [DONE]\n\n");
  return {
    bytes: Buffer.from(frames.join("")),
    frames: frames.length,
    reasoningChars,
    textChars,
    argumentsText,
  };
}
