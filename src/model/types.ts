/**
 * The model layer's contract: a frozen request in, an ordered stream of parts out, or an `LlmError`.
 *
 * Invariants:
 * - A successful stream ends with exactly one `usage` part followed by exactly one `finish` part (M11);
 *   the `finish` part carries the assembled assistant message, so a caller that ignores the deltas loses
 *   nothing.
 * - `tool-call` parts are emitted complete, after the provider said how the reply ended: a reply cut at
 *   max_tokens never yields one (M14).
 * - Failure is an `LlmError` thrown from the iterator, never a part. Its `partial` holds what the failed
 *   attempt produced, for the log-only `assistant/attempt` event (M16); it is never shown to the model.
 * - Error messages never contain an API key (INTERFACE "Secrets never appear").
 */
import type { FinishKind, Usage } from "../log/events.js";
import type { AssistantBlock, ReasoningField, SurfaceMessage, ToolCallBlock } from "../log/messages.js";

/** M4: the four effort levels. */
export type Effort = "off" | "low" | "high" | "max";
export const EFFORTS: readonly Effort[] = ["off", "low", "high", "max"];

/** A tool as declared to the model (M22): no `strict`, no `tool_choice`. */
export type ToolSpec = {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly parameters: Readonly<Record<string, unknown>>;
};

/** One model call. The loop deep-freezes it (L11); adapters never mutate it. */
export type ModelRequest = {
  /** The model id sent on the wire. */
  readonly model: string;
  /** Top-level system text. Leading `system` messages in `messages` are joined after it (M7). */
  readonly system: string;
  readonly messages: readonly SurfaceMessage[];
  readonly tools: readonly ToolSpec[];
  readonly effort: Effort;
  /** Output cap; falls back to the route's `maxOutputTokens` (M2: request, then catalog). */
  readonly maxTokens?: number;
  /** Sent only when the caller set it and thinking is off (M3). The loop never sets it. */
  readonly temperature?: number;
  /** Extra request headers (e.g. a compaction marker, M5). Never used for credentials. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
};

/** Stream parts. Deltas are for live display; `finish` carries the assembled message. */
export type TextPart = { type: "text"; delta: string };
export type ReasoningPart = { type: "reasoning"; delta: string; field?: ReasoningField };
export type ToolCallPart = {
  type: "tool-call";
  id: string;
  name: string;
  /** JSON text of the arguments, repaired when the model's own text was malformed (M15). */
  arguments: string;
  /** The model's original text when `arguments` is a repair of it. */
  repairedFrom?: string;
  /**
   * The id the provider sent, when `id` had to be made unique (a server that numbers calls
   * `call_0` in every reply). `id` is what the log, the tools and every later request use.
   */
  providerCallId?: string;
};
/**
 * A tool-call block as the assembler finishes it: `providerCallId` is present only when the provider's id
 * was replaced to keep ids unique. It rides in `assistant/message` blocks as an extra field (the log keeps
 * `data` as given); the wire serialisers read only `id`.
 */
export type AssembledToolCallBlock = ToolCallBlock & { providerCallId?: string };

export type UsagePart = { type: "usage"; usage: Usage };
export type FinishPart = {
  type: "finish";
  finish: Exclude<FinishKind, "aborted" | "error">;
  /** A tool call whose id was made unique also carries `providerCallId` (see `AssembledToolCallBlock`). */
  blocks: AssistantBlock[];
  usage: Usage;
  /** M14: tool calls dropped because the reply was cut at max_tokens. */
  droppedToolCalls: number;
};
export type ModelPart = TextPart | ReasoningPart | ToolCallPart | UsagePart | FinishPart;

/** M17 codes (plus `HTTP_<status>` for anything unclassified). */
export type LlmErrorCode =
  | "AUTH"
  | "QUOTA"
  | "RATE_LIMIT"
  | "CONTEXT_WINDOW_EXCEEDED"
  | "INVALID_REQUEST"
  | "SERVER"
  | "TRANSPORT"
  | "TIMEOUT"
  | "ABORTED"
  | "STREAM_CLOSED"
  | "MALFORMED_RESPONSE"
  | "EMPTY_RESPONSE"
  | `HTTP_${number}`;

export class LlmError extends Error {
  readonly code: LlmErrorCode;
  /** Provider's Retry-After, converted to milliseconds (M17). */
  readonly retryAfterMs?: number;
  readonly status?: number;
  /** What the failed attempt had produced (M16: log only). */
  partial: AssistantBlock[];
  constructor(
    code: LlmErrorCode,
    message: string,
    options: { retryAfterMs?: number; status?: number; partial?: AssistantBlock[]; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "LlmError";
    this.code = code;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.status !== undefined) this.status = options.status;
    this.partial = options.partial ?? [];
  }
}

export interface ModelAdapter {
  /** Preset name, recorded on assistant messages so signatures go back only to the same route (M6). */
  readonly provider: string;
  stream(request: ModelRequest): AsyncIterable<ModelPart>;
  /**
   * Optional: does this request's local work ahead (its checks, its body), sending nothing, so a caller can
   * overlap it with a wait of its own (the loop: the log's flush before the request, L17). `stream` of the
   * same request object then starts from it; a failure here is not thrown but met again by `stream`.
   */
  prepare?(request: ModelRequest): void;
}

/** A finished reply, as `collectReply` returns it. */
export type AssembledReply = Omit<FinishPart, "type">;

/**
 * Drains a stream into its assembled reply, passing each part to `onPart` first (live display).
 * An LlmError propagates unchanged, with its `partial` blocks.
 */
export async function collectReply(
  stream: AsyncIterable<ModelPart>,
  onPart?: (part: ModelPart) => void,
): Promise<AssembledReply> {
  for await (const part of stream) {
    onPart?.(part);
    if (part.type === "finish") {
      const { type: _type, ...reply } = part;
      return reply;
    }
  }
  throw new LlmError("STREAM_CLOSED", "model stream ended without a finish part");
}

export const ZERO_USAGE: Usage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});
