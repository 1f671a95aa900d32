/**
 * The OpenAI Chat Completions request body (M3, M6, M26).
 *
 * Invariants:
 * - Never sent: `tool_choice`, `top_p`, penalties, per-tool `strict`; `temperature` only when the caller
 *   set it and thinking is off (M3).
 * - Assistant content is a plain string (M26); an assistant message with no text, no reasoning and no
 *   tool call is skipped.
 * - Reasoning goes back on every later request under the field it arrived in (M6, M26). A block from the
 *   other wire format uses the preset's field; a preset with no field sends none. Signatures and
 *   redacted thinking do not exist on this wire and are not sent.
 * - With `requiresReasoningContentOnAssistant`, an assistant message without reasoning carries
 *   `reasoning_content: ""` (DeepSeek).
 * - M9: historical arguments that are not a JSON object are sent as `{}`.
 * - Developer messages (SP8) become `system` messages in place.
 * - M10 (./images.ts): on a route with `images`, a user message still after the last assistant message
 *   carries its images as `image_url` parts with a data URL; a `read_image` result's image follows the
 *   run of tool messages in one user message (tool content is text only on this wire). Earlier messages
 *   send their handle text. A text-only route sends the text-only note in place of each handle.
 */
import { cachedJsonText, jsonArrayText } from "../../log/json-text.js";
import type { AssistantMessage, ImageRef, ReasoningField, SurfaceMessage } from "../../log/messages.js";
import { isJsonObject } from "../assembler.js";
import { type BodyParts, GrowingJsonList, joinJson } from "../body-json.js";
import { presetOf, type Route } from "../catalog.js";
import { reasoningBody, thinkingOn } from "../effort.js";
import { firstLiveIndex, loadImage, visibleText } from "../images.js";
import type { ModelRequest, ToolSpec } from "../types.js";

type WireToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };
export type WireMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ContentPart[] }
  | { role: "tool"; tool_call_id: string; content: string }
  | ({ role: "assistant"; content: string; tool_calls?: WireToolCall[] } & Partial<
      Record<ReasoningField, string>
    >);

/** The wire JSON already made for one adapter's requests: the history's messages and the system prompt. */
export type OpenAiHistory = {
  readonly messages: GrowingJsonList<SurfaceMessage, Route>;
  /** The last system text and its message JSON (the same prompt comes back every step). */
  system?: { text: string; json: string };
};

/**
 * The history's wire JSON, made once per message and preset: a request costs its new messages. One per
 * adapter: an adapter serves one session (its conversation and the side requests that
 * share its prefix), so a server driving many sessions never evicts one session's text for another's, as
 * the process-wide cache of 32 conversations did past 32 sessions.
 */
export function openAiHistory(): OpenAiHistory {
  return { messages: new GrowingJsonList<SurfaceMessage, Route>(wireMessage, 4) };
}

function systemJson(text: string, history: OpenAiHistory): string {
  if (history.system?.text !== text) {
    history.system = { text, json: JSON.stringify({ role: "system", content: text }) };
  }
  return history.system.json;
}

export function openAiChatBody(route: Route, request: ModelRequest, history: OpenAiHistory): BodyParts {
  const preset = presetOf(route, "openai-chat");
  const maxTokens = request.maxTokens ?? route.maxOutputTokens;
  const system = request.system === "" ? undefined : systemJson(request.system, history);
  // M10: the messages whose images are still shown are made fresh each request, never cached.
  const live = firstLiveIndex(request.messages);
  const settled = history.messages.join(request.messages.slice(0, live), route);
  const messages = joinJson([settled, ...liveJson(request.messages.slice(live), route, history)], system);
  const tail: Record<string, unknown> = {
    stream: true,
    stream_options: { include_usage: true },
    [preset.maxTokensField]: maxTokens,
    ...reasoningBody(preset.reasoning, request.effort, maxTokens),
  };
  if (request.temperature !== undefined && !thinkingOn(preset.reasoning, request.effort)) {
    tail.temperature = request.temperature;
  }
  const tools = request.tools.length > 0 ? jsonArrayText(request.tools, wireTool) : undefined;
  return {
    head: { model: request.model },
    messages,
    tail,
    ...(tools ? { tailText: [["tools", tools]] } : {}),
  };
}

/** A declaration's wire JSON, written once per declaration (the registry shares them: log/json-text.ts). */
const wireTool = cachedJsonText((tool: ToolSpec) => ({
  type: "function",
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
}));

/** The messages after the last assistant message: images as parts where the route takes them (M10). */
function* liveJson(
  messages: readonly SurfaceMessage[],
  route: Route,
  history: OpenAiHistory,
): Iterable<string | undefined> {
  let pending: ContentPart[] = [];
  for (const message of messages) {
    if (message.role !== "tool" && pending.length > 0) {
      yield JSON.stringify({ role: "user", content: pending });
      pending = [];
    }
    if (message.role === "user" && message.images && route.images) {
      const text: ContentPart[] = message.text === "" ? [] : [{ type: "text", text: message.text }];
      yield JSON.stringify({ role: "user", content: [...text, ...imageParts(message.images)] });
      continue;
    }
    yield history.messages.fragment(message, route);
    if (message.role === "tool" && message.images && route.images) {
      pending.push({ type: "text", text: `Image returned by ${message.name} (call ${message.callId}):` });
      pending.push(...imageParts(message.images));
    }
  }
  if (pending.length > 0) yield JSON.stringify({ role: "user", content: pending });
}

function imageParts(images: readonly ImageRef[]): ContentPart[] {
  return images.map((image) => {
    const loaded = loadImage(image);
    return loaded.ok
      ? { type: "image_url", image_url: { url: `data:${loaded.mediaType};base64,${loaded.base64}` } }
      : { type: "text", text: loaded.note };
  });
}

function wireMessage(message: SurfaceMessage, route: Route): WireMessage | undefined {
  switch (message.role) {
    case "system":
    case "developer":
      return message.text === "" ? undefined : { role: "system", content: message.text };
    case "user":
      return { role: "user", content: visibleText(message, route.images) };
    case "tool":
      return { role: "tool", tool_call_id: message.callId, content: visibleText(message, route.images) };
    case "assistant":
      return assistantMessage(route, message);
  }
}

function assistantMessage(route: Route, message: AssistantMessage): WireMessage | undefined {
  const preset = presetOf(route, "openai-chat");
  let content = "";
  const reasoning: Partial<Record<ReasoningField, string>> = {};
  const toolCalls: WireToolCall[] = [];
  for (const block of message.blocks) {
    if (block.type === "text") content += block.text;
    else if (block.type === "reasoning") {
      const field = block.field ?? preset.reasoningField;
      if (field === null || block.text === "") continue;
      reasoning[field] = (reasoning[field] ?? "") + block.text;
    } else {
      toolCalls.push({
        id: block.id,
        type: "function",
        function: { name: block.name, arguments: isJsonObject(block.arguments) ? block.arguments : "{}" },
      });
    }
  }
  const hasReasoning = Object.keys(reasoning).length > 0;
  if (content.trim() === "" && toolCalls.length === 0 && !hasReasoning) return undefined;
  if (preset.requiresReasoningContentOnAssistant && reasoning.reasoning_content === undefined) {
    reasoning.reasoning_content = "";
  }
  return {
    role: "assistant",
    content,
    ...reasoning,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
}
