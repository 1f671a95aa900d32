/**
 * The model-visible message shapes (C1 "surface"). These are what the projection produces and what the
 * model adapters serialise; they carry no storage or wire detail beyond what replay needs (M6, M9).
 */

export type TextBlock = { type: "text"; text: string };

/** M6: where a reasoning block came from on the OpenAI wire, so it is replayed under the same field. */
export type ReasoningField = "reasoning_content" | "reasoning" | "reasoning_text";

export type ReasoningBlock = {
  type: "reasoning";
  text: string;
  /** OpenAI-format field the reasoning arrived in (M26: replayed under the same name). */
  field?: ReasoningField;
  /** Anthropic thinking signature; re-attached only when the target provider and model are the same (M6). */
  signature?: string;
  /** Anthropic `redacted_thinking` payload, replayed as is to the same model. */
  redacted?: string;
};

/** `arguments` is the exact string the model produced (M9: replayed as `{}` when it is not a JSON object). */
export type ToolCallBlock = { type: "tool-call"; id: string; name: string; arguments: string };

export type AssistantBlock = TextBlock | ReasoningBlock | ToolCallBlock;

export type SystemMessage = { role: "system"; text: string };
/** SP8: tool-set changes are announced as developer messages instead of rewriting `tools`. */
export type DeveloperMessage = {
  role: "developer";
  text: string;
  toolAdditions?: string[];
  toolRemovals?: string[];
};
export type UserMessage = { role: "user"; text: string };
export type AssistantMessage = {
  role: "assistant";
  blocks: AssistantBlock[];
  /** Provider and model that produced the blocks: signatures are only replayed to the same pair (M6). */
  provider?: string;
  model?: string;
};
export type ToolResultMessage = {
  role: "tool";
  callId: string;
  name: string;
  text: string;
  isError?: boolean;
};

export type SurfaceMessage =
  | SystemMessage
  | DeveloperMessage
  | UserMessage
  | AssistantMessage
  | ToolResultMessage;

/** A surface node remembers the seq of the event that produced it: replacement ops address nodes by it. */
export type SurfaceNode = { seq: number; message: SurfaceMessage };

export function toolCallsOf(message: SurfaceMessage): ToolCallBlock[] {
  if (message.role !== "assistant") return [];
  return message.blocks.filter((b): b is ToolCallBlock => b.type === "tool-call");
}
