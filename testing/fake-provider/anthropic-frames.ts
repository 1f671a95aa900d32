/**
 * Renders a `FakeReply` as Anthropic Messages SSE events (`event:` + `data:` pairs): message_start,
 * one content block per thinking / text / tool call, message_delta with the stop reason, message_stop.
 */
import { argumentText, type FakeReply, pieces } from "./script.js";

export function anthropicFrames(reply: FakeReply, model: string): string[] {
  const size = reply.chunkSize ?? 7;
  const event = (payload: { type: string } & Record<string, unknown>): string =>
    `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`;
  const u = reply.usage ?? {};
  const frames = [
    event({
      type: "message_start",
      message: {
        id: "msg_fake",
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: u.input ?? 10,
          cache_read_input_tokens: u.cacheRead ?? 0,
          cache_creation_input_tokens: u.cacheWrite ?? 0,
          output_tokens: 1,
        },
      },
    }),
  ];
  let index = 0;
  if (reply.reasoning !== undefined) {
    frames.push(
      event({
        type: "content_block_start",
        index,
        content_block: { type: "thinking", thinking: "", signature: "" },
      }),
    );
    for (const piece of pieces(reply.reasoning, size)) {
      frames.push(
        event({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: piece } }),
      );
    }
    if (reply.signature !== undefined) {
      frames.push(
        event({
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: reply.signature },
        }),
      );
    }
    frames.push(event({ type: "content_block_stop", index }));
    index++;
  }
  if (reply.text !== undefined) {
    frames.push(event({ type: "content_block_start", index, content_block: { type: "text", text: "" } }));
    frames.push(event({ type: "ping" }));
    for (const piece of pieces(reply.text, size)) {
      frames.push(event({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }));
    }
    frames.push(event({ type: "content_block_stop", index }));
    index++;
  }
  for (const call of reply.toolCalls ?? []) {
    const block = {
      type: "tool_use",
      name: call.name,
      input: {},
      ...(call.id === undefined ? {} : { id: call.id }),
    };
    frames.push(event({ type: "content_block_start", index, content_block: block }));
    for (const piece of pieces(argumentText(call), size)) {
      frames.push(
        event({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: piece },
        }),
      );
    }
    frames.push(event({ type: "content_block_stop", index }));
    index++;
  }
  const stop =
    reply.finish === undefined ? (reply.toolCalls?.length ? "tool_use" : "end_turn") : reply.finish;
  frames.push(
    event({
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: u.output ?? 5 },
    }),
  );
  if (stop !== null) frames.push(event({ type: "message_stop" }));
  return frames;
}
