/**
 * The Anthropic Messages request body (M3, M6–M9), for DeepSeek's `/anthropic` and for Anthropic.
 *
 * Invariants:
 * - M7: the top-level `system` is the request's system text joined with the leading system messages.
 *   On an `in-history` route, a later system message goes into `messages` as `role:"system"` after the
 *   user or tool-result turn it follows; on a `rewrite` route it is joined into the top-level system.
 * - M8: a tool result is a `tool_result` block in a user message; consecutive same-role messages are
 *   merged; inside a user message the `tool_result` blocks come first; empty text blocks are dropped and
 *   messages left empty are skipped.
 * - M6: reasoning goes back as `thinking`. The signature (or the redacted payload) is attached only when
 *   the message came from this same provider and model; otherwise the text is sent bare, or dropped on
 *   routes that refuse unsigned thinking (preset `unsignedThinking`).
 * - M9: historical arguments that are not a JSON object are sent as `{}`.
 * - M3: no `tool_choice`, `top_p`, `top_k`, `cache_control` or per-tool `strict`.
 * - M10 (../images.ts): on a route with `images`, a user message or `read_image` result still after the
 *   last assistant message carries its images as `image` blocks with a base64 source; earlier ones send
 *   their handle text. A text-only route sends the text-only note in place of each handle.
 */
import { cachedJsonText, jsonArrayText } from "../../log/json-text.js";
import type { AssistantMessage, ImageRef } from "../../log/messages.js";
import { type BodyParts, joinJson } from "../body-json.js";
import { presetOf, type Route } from "../catalog.js";
import { reasoningBody, thinkingOn } from "../effort.js";
import { firstLiveIndex, loadImage, visibleText } from "../images.js";
import { LlmError, type ModelRequest, type ToolSpec } from "../types.js";

type TextContent = { type: "text"; text: string };
type ImageContent = { type: "image"; source: { type: "base64"; media_type: string; data: string } };
type ContentBlock =
  | TextContent
  | ImageContent
  | { type: "thinking"; thinking: string; signature?: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | {
      type: "tool_result";
      tool_use_id: string;
      content: string | (TextContent | ImageContent)[];
      is_error?: boolean;
    };

export type AnthropicMessage =
  | { role: "user" | "assistant"; content: ContentBlock[] }
  | { role: "system"; content: string };

export function anthropicBody(route: Route, request: ModelRequest): BodyParts {
  const preset = route.preset;
  const maxTokens = request.maxTokens ?? route.maxOutputTokens;
  const system: string[] = request.system === "" ? [] : [request.system];
  const messages: AnthropicMessage[] = [];
  let leading = true;
  const live = firstLiveIndex(request.messages);
  for (const [index, message] of request.messages.entries()) {
    const shown = route.images && index >= live; // M10: images go as bytes in this request
    if (message.role === "system" && (leading || preset.systemPromptUpdate === "rewrite")) {
      if (message.text !== "") system.push(message.text);
      continue;
    }
    leading = false;
    switch (message.role) {
      case "system":
      case "developer":
        if (message.role === "system" || preset.systemPromptUpdate === "in-history") {
          messages.push(inHistorySystem(messages, message.text));
        } else if (message.text !== "") {
          append(messages, "user", [{ type: "text", text: message.text }]);
        }
        break;
      case "user": {
        const text = visibleText(message, route.images);
        const blocks: ContentBlock[] = text === "" ? [] : [{ type: "text", text }];
        if (shown && message.images) blocks.push(...imageBlocks(message.images));
        append(messages, "user", blocks);
        break;
      }
      case "tool":
        append(messages, "user", [
          {
            type: "tool_result",
            tool_use_id: message.callId,
            content:
              shown && message.images
                ? [{ type: "text", text: message.text }, ...imageBlocks(message.images)]
                : visibleText(message, route.images),
            ...(message.isError ? { is_error: true } : {}),
          },
        ]);
        break;
      case "assistant":
        append(messages, "assistant", assistantBlocks(route, request.model, message));
        break;
    }
  }
  const head: Record<string, unknown> = {
    model: request.model,
    stream: true,
    max_tokens: maxTokens,
    ...reasoningBody(preset.reasoning, request.effort, maxTokens),
  };
  if (system.length > 0) head.system = system.join("\n\n");
  const tail: Record<string, unknown> = {};
  if (request.temperature !== undefined && !thinkingOn(preset.reasoning, request.effort)) {
    tail.temperature = request.temperature;
  }
  const tools = request.tools.length > 0 ? jsonArrayText(request.tools, wireTool) : undefined;
  // Messages merge across history entries (M8), so they are serialized whole on each request.
  return {
    head,
    messages: joinJson(messages.map((message) => JSON.stringify(message))),
    tail,
    ...(tools ? { tailText: [["tools", tools]] } : {}),
  };
}

/** A declaration's wire JSON, written once per declaration (the registry shares them: log/json-text.ts). */
const wireTool = cachedJsonText((tool: ToolSpec) => ({
  name: tool.name,
  description: tool.description,
  input_schema: tool.parameters,
}));

function inHistorySystem(messages: readonly AnthropicMessage[], text: string): AnthropicMessage {
  if (text.trim() === "") throw new LlmError("INVALID_REQUEST", "empty in-history system update");
  const previous = messages[messages.length - 1];
  if (previous?.role !== "user") {
    throw new LlmError("INVALID_REQUEST", "system update without a preceding user or tool-result turn");
  }
  return { role: "system", content: text };
}

/** Appends blocks, merging with the previous message of the same role (M8). */
function append(messages: AnthropicMessage[], role: "user" | "assistant", blocks: ContentBlock[]): void {
  if (blocks.length === 0) return;
  const last = messages[messages.length - 1];
  if (last && last.role === role && Array.isArray(last.content)) {
    last.content.push(...blocks);
    if (role === "user") last.content.sort(resultsFirst);
    return;
  }
  messages.push({ role, content: role === "user" ? [...blocks].sort(resultsFirst) : blocks });
}

/** Stable sort key: `tool_result` blocks before everything else (M8). */
function resultsFirst(a: ContentBlock, b: ContentBlock): number {
  return (a.type === "tool_result" ? 0 : 1) - (b.type === "tool_result" ? 0 : 1);
}

function assistantBlocks(route: Route, model: string, message: AssistantMessage): ContentBlock[] {
  const sameModel = message.provider === route.preset.name && message.model === model;
  const out: ContentBlock[] = [];
  for (const block of message.blocks) {
    switch (block.type) {
      case "text":
        if (block.text !== "") out.push({ type: "text", text: block.text });
        break;
      case "reasoning":
        if (sameModel && block.redacted !== undefined) {
          out.push({ type: "redacted_thinking", data: block.redacted });
        } else if (sameModel && block.signature !== undefined) {
          out.push({ type: "thinking", thinking: block.text, signature: block.signature });
        } else if (presetOf(route, "anthropic-messages").unsignedThinking === "send" && block.text !== "") {
          out.push({ type: "thinking", thinking: block.text });
        }
        break;
      case "tool-call":
        out.push({ type: "tool_use", id: block.id, name: block.name, input: objectInput(block.arguments) });
        break;
    }
  }
  return out;
}

/** M9: anything but a JSON object becomes `{}`; the log keeps the original string. */
function objectInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // fall through
  }
  return {};
}

function imageBlocks(images: readonly ImageRef[]): (TextContent | ImageContent)[] {
  return images.map((image) => {
    const loaded = loadImage(image);
    return loaded.ok
      ? { type: "image", source: { type: "base64", media_type: loaded.mediaType, data: loaded.base64 } }
      : { type: "text", text: loaded.note };
  });
}
