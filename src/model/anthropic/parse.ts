/**
 * Reads an Anthropic Messages stream into parts (M11, M12, M20).
 *
 * Invariants:
 * - M11 strict assembly: every frame is a JSON object whose `type` equals its SSE event name, otherwise
 *   `MALFORMED_RESPONSE`; a delta must match the kind of block it addresses; a stream that ends before
 *   `message_stop` is `STREAM_CLOSED`.
 * - Block mapping: text → text, thinking → reasoning (with its signature), redacted_thinking → reasoning
 *   carrying the payload, tool_use → tool call with `input_json_delta` pieces concatenated raw.
 * - M12: `end_turn`/`stop_sequence` → stop, `tool_use` → tool-calls, `max_tokens` → max-tokens, any other
 *   reason → `MALFORMED_RESPONSE`.
 * - M20: `input_tokens` is already the uncached part; cache read and write are separate fields. Values in
 *   `message_delta` replace those from `message_start`.
 * - Unknown event and block types are skipped, so a new server feature does not fail the stream.
 */
import type { EventSourceMessage } from "eventsource-parser";
import type { Usage } from "../../log/events.js";
import type { CallIds } from "../../log/pairing.js";
import { ReplyAssembler, type ReplyFinish, withPartial } from "../assembler.js";
import { inBandError } from "../errors.js";
import { LlmError, type ModelPart } from "../types.js";

type Frame = Record<string, unknown> & { type: string };

export async function* anthropicParts(
  frames: AsyncIterable<EventSourceMessage[]>,
  /** The tool-call ids of the request's history: a reply's ids are kept out of them. */
  usedCallIds?: () => CallIds,
): AsyncGenerator<ModelPart> {
  const assembler = new ReplyAssembler(usedCallIds);
  const usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  /** `input` of a tool_use start, used when no `input_json_delta` follows. */
  const initialInput = new Map<string, string>();
  let stopReason: unknown;
  let stopped = false;
  try {
    read: for await (const batch of frames) {
      for (const message of batch) {
        const frame = parseFrame(message);
        switch (frame.type) {
          case "message_start":
            readUsage(usage, record(frame.message).usage);
            break;
          case "content_block_start": {
            const key = String(frame.index);
            const block = record(frame.content_block);
            if (block.type === "text") {
              const text = assembler.openText(key);
              if (typeof block.text === "string" && block.text !== "") {
                text.text = block.text;
                yield { type: "text", delta: block.text };
              }
            } else if (block.type === "thinking") {
              const thinking = typeof block.thinking === "string" ? block.thinking : "";
              const signature =
                typeof block.signature === "string" && block.signature !== "" ? block.signature : undefined;
              assembler.openReasoning(
                key,
                signature === undefined ? { text: thinking } : { text: thinking, signature },
              );
              if (thinking !== "") yield { type: "reasoning", delta: thinking };
            } else if (block.type === "redacted_thinking") {
              assembler.openReasoning(key, {
                text: "",
                redacted: typeof block.data === "string" ? block.data : "",
              });
            } else if (block.type === "tool_use") {
              const id = typeof block.id === "string" ? block.id : undefined;
              assembler.openToolCall(key, id, typeof block.name === "string" ? block.name : "");
              const input = block.input;
              if (typeof input === "object" && input !== null && Object.keys(input).length > 0) {
                initialInput.set(key, JSON.stringify(input));
              }
            }
            break;
          }
          case "content_block_delta": {
            const part = applyDelta(assembler, String(frame.index), record(frame.delta));
            if (part) yield part;
            break;
          }
          case "content_block_stop": {
            const key = String(frame.index);
            const block = assembler.at(key);
            const input = initialInput.get(key);
            if (block?.type === "tool-call" && block.arguments === "" && input !== undefined)
              block.arguments = input;
            break;
          }
          case "message_delta":
            stopReason = record(frame.delta).stop_reason ?? stopReason;
            readUsage(usage, frame.usage);
            break;
          case "message_stop":
            stopped = true;
            break read;
          case "error":
            throw inBandError(frame);
          default:
            break; // ping and future event types
        }
      }
    }
    if (!stopped) throw new LlmError("STREAM_CLOSED", "stream ended before message_stop");
    const done = assembler.complete(mapStopReason(stopReason), usage);
    yield* done.toolCalls;
    yield { type: "usage", usage: done.finish.usage };
    yield done.finish;
  } catch (error) {
    throw withPartial(error, assembler);
  }
}

function applyDelta(
  assembler: ReplyAssembler,
  key: string,
  delta: Record<string, unknown>,
): ModelPart | undefined {
  const block = assembler.at(key);
  if (!block) return undefined; // a block type we skipped
  const mismatch = (): LlmError =>
    new LlmError("MALFORMED_RESPONSE", `${String(delta.type)} does not fit a ${block.type} block`);
  switch (delta.type) {
    case "text_delta": {
      if (block.type !== "text") throw mismatch();
      const text = stringField(delta, "text");
      block.text += text;
      return text === "" ? undefined : { type: "text", delta: text };
    }
    case "thinking_delta": {
      if (block.type !== "reasoning") throw mismatch();
      const text = stringField(delta, "thinking");
      block.text += text;
      return text === "" ? undefined : { type: "reasoning", delta: text };
    }
    case "signature_delta":
      if (block.type !== "reasoning") throw mismatch();
      block.signature = (block.signature ?? "") + stringField(delta, "signature");
      return undefined;
    case "input_json_delta":
      if (block.type !== "tool-call") throw mismatch();
      block.arguments += stringField(delta, "partial_json");
      return undefined;
    default:
      return undefined;
  }
}

function parseFrame(message: EventSourceMessage): Frame {
  let value: unknown;
  try {
    value = JSON.parse(message.data);
  } catch {
    throw new LlmError("MALFORMED_RESPONSE", `stream frame is not JSON: ${message.data.slice(0, 80)}`);
  }
  const frame = record(value);
  if (typeof frame.type !== "string") throw new LlmError("MALFORMED_RESPONSE", "stream frame has no type");
  if (message.event !== undefined && message.event !== frame.type) {
    throw new LlmError(
      "MALFORMED_RESPONSE",
      `frame type "${frame.type}" does not match event "${message.event}"`,
    );
  }
  return frame as Frame;
}

function mapStopReason(reason: unknown): ReplyFinish {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "tool_use":
      return "tool-calls";
    case "max_tokens":
      return "max-tokens";
    default:
      throw new LlmError("MALFORMED_RESPONSE", `unsupported stop reason "${String(reason)}"`);
  }
}

function readUsage(usage: Usage, raw: unknown): void {
  const u = record(raw);
  if (typeof u.input_tokens === "number") usage.inputTokens = u.input_tokens;
  if (typeof u.output_tokens === "number") usage.outputTokens = u.output_tokens;
  if (typeof u.cache_read_input_tokens === "number") usage.cacheReadTokens = u.cache_read_input_tokens;
  if (typeof u.cache_creation_input_tokens === "number")
    usage.cacheWriteTokens = u.cache_creation_input_tokens;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function stringField(record: Record<string, unknown>, key: string): string {
  const value = record[key];
  return typeof value === "string" ? value : "";
}
