/**
 * Reads an OpenAI Chat Completions stream into parts (M11, M20, M26).
 *
 * Invariants:
 * - Reasoning is read from the first non-empty of `reasoning_content`, `reasoning`, `reasoning_text`, and
 *   the block remembers which, so it is replayed under the same field (M6, M26).
 * - Tool-call pieces are keyed by their `index`; argument text is concatenated raw (M11).
 * - Finish mapping (M26): `stop` → stop, `length` → max-tokens, `tool_calls` → tool-calls,
 *   `content_filter` → `MALFORMED_RESPONSE`; a stream that ends with no `finish_reason` → `TRANSPORT`
 *   (retryable). Other reasons are read as `stop`: the blocks, not the reason, decide what happens (L2).
 * - Usage (M20): `prompt_tokens` includes cache hits, so they are subtracted to keep the four disjoint.
 * - Only choice 0 is read. A frame that is not JSON is `MALFORMED_RESPONSE`; an `error` frame is
 *   classified like an HTTP error body (M17).
 */
import type { EventSourceMessage } from "eventsource-parser";
import type { Usage } from "../../log/events.js";
import type { ReasoningField } from "../../log/messages.js";
import type { CallIds } from "../../log/pairing.js";
import { ReplyAssembler, type ReplyFinish, withPartial } from "../assembler.js";
import { inBandError } from "../errors.js";
import { LlmError, type ModelPart, ZERO_USAGE } from "../types.js";

const REASONING_FIELDS: readonly ReasoningField[] = ["reasoning_content", "reasoning", "reasoning_text"];

type ChunkToolCall = { index?: number; id?: string; function?: { name?: string; arguments?: string } };
type ChunkDelta = Partial<Record<ReasoningField, unknown>> & {
  content?: unknown;
  tool_calls?: ChunkToolCall[] | null;
};
type Chunk = {
  choices?: { index?: number; delta?: ChunkDelta; finish_reason?: string | null }[];
  usage?: Record<string, unknown> | null;
  error?: unknown;
};

export async function* openAiChatParts(
  frames: AsyncIterable<EventSourceMessage[]>,
  /** The tool-call ids of the request's history: a reply's ids are kept out of them. */
  usedCallIds?: () => CallIds,
): AsyncGenerator<ModelPart> {
  const assembler = new ReplyAssembler(usedCallIds);
  let finishReason: string | undefined;
  let usage: Usage | undefined;
  try {
    read: for await (const batch of frames) {
      for (const frame of batch) {
        if (frame.data === "[DONE]") break read;
        const chunk = parseChunk(frame.data);
        if (chunk.error !== undefined && chunk.error !== null) throw inBandError(chunk);
        if (chunk.usage) usage = openAiUsage(chunk.usage);
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta;
        if (delta) {
          for (const field of REASONING_FIELDS) {
            const text = delta[field];
            if (typeof text === "string" && text !== "") {
              assembler.appendReasoning(text, field);
              yield { type: "reasoning", delta: text, field };
              break;
            }
          }
          const content = delta.content;
          if (typeof content === "string" && content !== "") {
            assembler.appendText(content);
            yield { type: "text", delta: content };
          }
          if (delta.tool_calls) addToolCalls(assembler, delta.tool_calls);
        }
        if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") {
          finishReason = choice.finish_reason;
        }
      }
    }
    if (finishReason === undefined) {
      throw new LlmError("TRANSPORT", "stream ended without finish_reason");
    }
    const done = assembler.complete(mapFinish(finishReason), usage ?? ZERO_USAGE);
    yield* done.toolCalls;
    yield { type: "usage", usage: done.finish.usage };
    yield done.finish;
  } catch (error) {
    throw withPartial(error, assembler);
  }
}

function addToolCalls(assembler: ReplyAssembler, calls: ChunkToolCall[]): void {
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!;
    const key = `tool:${call.index ?? i}`;
    let block = assembler.at(key);
    // A new id at an index already holding a complete call opens a new call (some servers reuse index 0).
    if (block?.type === "tool-call" && call.id && block.id !== call.id && block.arguments !== "") {
      block = undefined;
    }
    if (block?.type !== "tool-call") block = assembler.openToolCall(key, call.id, call.function?.name ?? "");
    if (block.type !== "tool-call") continue;
    if (call.function?.name && block.name === "") block.name = call.function.name;
    if (typeof call.function?.arguments === "string") block.arguments += call.function.arguments;
  }
}

function parseChunk(data: string): Chunk {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new LlmError("MALFORMED_RESPONSE", `stream frame is not JSON: ${data.slice(0, 80)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new LlmError("MALFORMED_RESPONSE", "stream frame is not a JSON object");
  }
  return value as Chunk;
}

function mapFinish(reason: string): ReplyFinish {
  switch (reason) {
    case "length":
      return "max-tokens";
    case "tool_calls":
    case "function_call":
      return "tool-calls";
    case "content_filter":
      throw new LlmError("MALFORMED_RESPONSE", "the provider stopped the reply: content_filter");
    default:
      return "stop";
  }
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function field(record: unknown, key: string): unknown {
  return typeof record === "object" && record !== null ? (record as Record<string, unknown>)[key] : undefined;
}

/** M20: disjoint counts from a combined prompt count. */
export function openAiUsage(raw: Record<string, unknown>): Usage {
  const details = raw.prompt_tokens_details;
  const cacheRead = count(field(details, "cached_tokens") ?? raw.prompt_cache_hit_tokens);
  const cacheWrite = count(field(details, "cache_write_tokens"));
  const usage: Usage = {
    inputTokens: Math.max(0, count(raw.prompt_tokens) - cacheRead - cacheWrite),
    outputTokens: count(raw.completion_tokens),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
  };
  const reasoning = field(raw.completion_tokens_details, "reasoning_tokens");
  if (typeof reasoning === "number") usage.reasoningTokens = reasoning;
  return usage;
}
