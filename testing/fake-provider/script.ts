/**
 * The fake provider's script language: what one scripted reply can say, in wire-neutral terms. The same
 * `FakeReply` is rendered as OpenAI Chat chunks or Anthropic Messages events, whichever endpoint the
 * client called (./openai-frames.ts, ./anthropic-frames.ts).
 */
import type { IncomingHttpHeaders } from "node:http";

export type FakeWire = "openai-chat" | "anthropic-messages";

export type FakeToolCall = {
  /** Omit to test the adapter's `call-<index>` fallback (M11). */
  id?: string;
  name: string;
  /** A string is sent verbatim (malformed JSON included); an object is JSON-encoded. */
  arguments: string | Record<string, unknown>;
};

export type FakeFault =
  /** Destroy the socket after this many frames (a dropped connection mid-stream). */
  | { kind: "drop"; afterFrames: number }
  /** Stop sending after this many frames; resume after `ms`, or never (until the client gives up). */
  | { kind: "stall"; afterFrames: number; ms?: number }
  /** Send a frame whose data is not JSON (default `{not json`) after this many frames, then go on. */
  | { kind: "malformed"; afterFrames: number; data?: string }
  /** End the response cleanly after this many frames (EOF before the end of the reply). */
  | { kind: "eof"; afterFrames: number }
  /** Stop after this many frames until `until` settles, then go on (a test decides when the stream resumes). */
  | { kind: "hold"; afterFrames: number; until: Promise<unknown> };

export type FakeUsage = { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };

export type FakeReply = {
  /** An HTTP error instead of a stream: status, headers (e.g. Retry-After) and body. */
  status?: number;
  headers?: Record<string, string>;
  body?: string | Record<string, unknown>;

  reasoning?: string;
  /** OpenAI wire: the field reasoning is streamed in (default `reasoning_content`). */
  reasoningField?: "reasoning_content" | "reasoning" | "reasoning_text";
  /** Anthropic wire: thinking signature sent as a `signature_delta`. */
  signature?: string;
  text?: string;
  /** Several calls are parallel tool calls, in one reply. */
  toolCalls?: FakeToolCall[];
  /**
   * The wire's finish value (`stop`, `length`, `tool_calls`, `content_filter` / `end_turn`, `tool_use`,
   * `max_tokens`, `refusal`). Default: the tool-call value when there are calls, else the stop value.
   * `null`: none is sent (OpenAI: no `finish_reason`; Anthropic: no `message_stop`).
   */
  finish?: string | null;
  usage?: FakeUsage;
  /** Characters per delta for text, reasoning and arguments (default 7). */
  chunkSize?: number;
  fault?: FakeFault;
  /** Exact bytes to send instead of rendering the reply (recorded fixtures). */
  raw?: string | Uint8Array;
  /** Write `raw` in pieces of these byte sizes, cycling (default: one piece). */
  rawChunkSizes?: readonly number[];
  /** Pause between frames (or raw pieces), in ms. */
  frameDelayMs?: number;
};

/** One request as the fake received it. */
export type FakeRequest = {
  /** 0-based order of arrival. */
  index: number;
  method: string;
  path: string;
  wire: FakeWire | undefined;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (`undefined` when it was not JSON). */
  body: Record<string, unknown> | undefined;
  rawBody: string;
};

export type FakeScript =
  | readonly FakeReply[]
  | ((request: FakeRequest, index: number) => FakeReply | Promise<FakeReply>);

export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  const chars = Array.from(text); // never split a surrogate pair
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

export function argumentText(call: FakeToolCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}
