/**
 * Builds the assistant message from streamed pieces, and applies the rules that decide what a finished
 * reply is worth. Both wire formats feed one of these.
 *
 * Invariants:
 * - Blocks keep the order in which the provider opened them; reasoning, text and tool calls interleave
 *   as they came.
 * - A tool call without an id gets `call-<index>` (M11).
 * - Tool-call ids leave unique, within the reply and against every id in the request's
 *   history (M8 rejects a repeat before sending, so a server that numbers calls `call_0` in every reply
 *   would end the turn). A repeated id becomes `<id>-<n>`, the smallest n ≥ 2 not yet used: a function of
 *   the history and the reply alone, so a replayed or resumed session assigns the same ids. The provider's
 *   id is kept as `providerCallId`. The unique id is what the log, the tools and every later request carry,
 *   in the assistant message and in the tool result alike: the server keeps no state between requests and
 *   only needs each result to name a call of the message before it, and ids unique within one request
 *   (Anthropic rejects repeated `tool_use` ids; OpenAI-compatible chat templates pair results by id). The
 *   suffix keeps to `[A-Za-z0-9_-]`, which Anthropic requires of ids.
 * - At max_tokens every tool call is dropped, text and reasoning are kept (M14).
 * - Otherwise malformed argument JSON is repaired with `jsonrepair`; what cannot be repaired stays as the
 *   model wrote it, so the tool pipeline answers `Error: invalid arguments: …` (M15). Never a failed turn.
 * - A reply with no tool call and no non-whitespace text is `EMPTY_RESPONSE` (M13, and §9: reasoning-only
 *   and blank replies too), carrying what it had as `partial` for the attempt log (M16).
 */
import { jsonrepair } from "jsonrepair";
import type { Usage } from "../log/events.js";
import type {
  AssistantBlock,
  ReasoningBlock,
  ReasoningField,
  TextBlock,
  ToolCallBlock,
} from "../log/messages.js";
import type { CallIds } from "../log/pairing.js";
import { type AssembledToolCallBlock, type FinishPart, LlmError, type ToolCallPart } from "./types.js";

export type ReplyFinish = FinishPart["finish"];

export class ReplyAssembler {
  private readonly blocks: AssistantBlock[] = [];
  private readonly keyed = new Map<string, AssistantBlock>();
  /** Calls that came without an id: their `call-<index>` is ours, not the provider's. */
  private readonly unnamed = new WeakSet<ToolCallBlock>();
  private toolCount = 0;

  /** `usedCallIds`: the tool-call ids already in the request's history, read once the reply is complete. */
  constructor(private readonly usedCallIds: () => CallIds = () => NO_IDS) {}

  /** Appends to the latest block when it is text, else opens a text block (OpenAI wire). */
  appendText(delta: string): void {
    const last = this.blocks[this.blocks.length - 1];
    if (last?.type === "text") last.text += delta;
    else this.blocks.push({ type: "text", text: delta });
  }

  /** Appends to the latest block when it is reasoning from the same field, else opens one. */
  appendReasoning(delta: string, field?: ReasoningField): void {
    const last = this.blocks[this.blocks.length - 1];
    if (last?.type === "reasoning" && last.field === field && last.signature === undefined)
      last.text += delta;
    else
      this.blocks.push(
        field === undefined ? { type: "reasoning", text: delta } : { type: "reasoning", text: delta, field },
      );
  }

  /** Opens a block addressed by a provider key (Anthropic content index, OpenAI tool-call index). */
  openText(key: string): TextBlock {
    return this.open(key, { type: "text", text: "" });
  }

  openReasoning(key: string, initial: Omit<ReasoningBlock, "type">): ReasoningBlock {
    return this.open(key, { type: "reasoning", ...initial });
  }

  openToolCall(key: string, id: string | undefined, name: string): ToolCallBlock {
    const index = this.toolCount++;
    const block = this.open(key, { type: "tool-call", id: id || `call-${index}`, name, arguments: "" });
    if (!id) this.unnamed.add(block);
    return block;
  }

  /** The block opened under `key`, if any. */
  at(key: string): AssistantBlock | undefined {
    return this.keyed.get(key);
  }

  private open<B extends AssistantBlock>(key: string, block: B): B {
    this.blocks.push(block);
    this.keyed.set(key, block);
    return block;
  }

  /** Everything received so far, for a failed attempt's log entry (M16). */
  partial(): AssistantBlock[] {
    return this.blocks.filter(hasContent).map((b) => ({ ...b }));
  }

  /**
   * Applies M13–M15 and returns the tool-call parts to emit plus the finish part.
   * Throws `EMPTY_RESPONSE` when nothing usable came back.
   */
  complete(finish: ReplyFinish, usage: Usage): { toolCalls: ToolCallPart[]; finish: FinishPart } {
    const kept: AssistantBlock[] = [];
    const toolCalls: ToolCallPart[] = [];
    let dropped = 0;
    let visibleText = false;
    let used: CallIds | undefined;
    const given = new Set<string>();
    for (const block of this.blocks) {
      if (!hasContent(block)) continue;
      if (block.type === "tool-call") {
        if (finish === "max-tokens") {
          dropped++;
          continue;
        }
        used ??= this.usedCallIds();
        const id = uniqueCallId(block.id, used, given);
        given.add(id);
        const renamed = id !== block.id;
        const original = renamed && !this.unnamed.has(block) ? { providerCallId: block.id } : {};
        const part: ToolCallPart = { ...repairedCall(block), id, ...original };
        toolCalls.push(part);
        const assembled: AssembledToolCallBlock = {
          type: "tool-call",
          id,
          name: part.name,
          arguments: part.arguments,
          ...original,
        };
        kept.push(assembled);
        continue;
      }
      if (block.type === "text" && block.text.trim() !== "") visibleText = true;
      kept.push(block);
    }
    if (finish !== "max-tokens" && toolCalls.length === 0 && !visibleText) {
      const what = kept.length === 0 ? "no content" : "no text and no tool call";
      throw new LlmError("EMPTY_RESPONSE", `the model replied with ${what}`, { partial: kept });
    }
    const kind: ReplyFinish = finish === "max-tokens" ? finish : toolCalls.length > 0 ? "tool-calls" : "stop";
    return {
      toolCalls,
      finish: { type: "finish", finish: kind, blocks: kept, usage, droppedToolCalls: dropped },
    };
  }
}

const NO_IDS: CallIds = new Set<string>();

/** `id`, or `<id>-<n>` with the smallest n ≥ 2 that neither the history nor the reply has. */
export function uniqueCallId(id: string, used: CallIds, given: CallIds): string {
  if (!used.has(id) && !given.has(id)) return id;
  for (let n = 2; ; n++) {
    const candidate = `${id}-${n}`;
    if (!used.has(candidate) && !given.has(candidate)) return candidate;
  }
}

function hasContent(block: AssistantBlock): boolean {
  switch (block.type) {
    case "text":
      return block.text !== "";
    case "reasoning":
      return block.text !== "" || block.signature !== undefined || block.redacted !== undefined;
    case "tool-call":
      return true;
  }
}

/** M15: keep valid object JSON as is, repair what can be repaired, pass the rest on untouched. */
function repairedCall(block: ToolCallBlock): ToolCallPart {
  const base = { type: "tool-call" as const, id: block.id, name: block.name };
  const text = block.arguments;
  if (text.trim() === "") return { ...base, arguments: "{}" };
  if (isJsonObject(text)) return { ...base, arguments: text };
  try {
    const repaired = jsonrepair(text);
    if (isJsonObject(repaired)) return { ...base, arguments: repaired, repairedFrom: text };
  } catch {
    // not repairable: the tool pipeline reports it to the model
  }
  return { ...base, arguments: text };
}

export function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Gives a failure the blocks received before it, for the attempt log (M16). */
export function withPartial(error: unknown, assembler: ReplyAssembler): LlmError {
  const llm =
    error instanceof LlmError
      ? error
      : new LlmError("MALFORMED_RESPONSE", `could not read the stream: ${String(error)}`, { cause: error });
  if (llm.partial.length === 0) llm.partial = assembler.partial();
  return llm;
}
