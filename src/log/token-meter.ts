/**
 * C2: the token meter. How many tokens the next request would cost, from the log alone.
 *
 * Estimate = the last successful request's provider usage (input + cache read + cache write + output) as an
 * anchor, plus the signed heuristic change of the surface since that reply. The anchor is used only when
 * the request header (model, tools, system prompt) has not changed since and the usage is at least the
 * heuristic of the surface it answered; otherwise the estimate is the heuristic alone.
 *
 * Heuristic (seed C2): text and reasoning `ceil(len/4)+4`; a tool call `ceil(name/4)+ceil(args/4)+4`; each
 * message `+4` for its role; the tool declarations `ceil(JSON/4)+4`. CJK and JSON Schema are underpriced
 * (known gap, as in DSH).
 *
 * Invariants:
 * - Incremental: node costs are cached by seq and the running sum follows appends, so a measurement costs
 *   what was appended since the last one. A replacement (compaction, pruning, system rewrite) makes the
 *   next measurement re-add the cached costs of the surviving nodes once.
 * - Pure over the log: two processes measuring the same events get the same number.
 */
import type { LogEvent, Usage } from "./events.js";
import { jsonArrayText } from "./json-text.js";
import type { AssistantBlock, SurfaceMessage, SurfaceNode } from "./messages.js";
import type { SurfaceProjector } from "./surface.js";

export const CHARS_PER_TOKEN = 4;
export const BLOCK_OVERHEAD = 4;
export const ROLE_OVERHEAD = 4;

export function textTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function blockTokens(block: AssistantBlock): number {
  switch (block.type) {
    case "text":
    case "reasoning":
      return textTokens(block.text) + BLOCK_OVERHEAD;
    case "tool-call":
      return textTokens(block.name) + textTokens(block.arguments) + BLOCK_OVERHEAD;
    default:
      return BLOCK_OVERHEAD + textTokens(JSON.stringify(block));
  }
}

/** The heuristic cost of one model-visible message (reasoning priced as history). */
export function messageTokens(message: SurfaceMessage): number {
  switch (message.role) {
    case "assistant":
      return ROLE_OVERHEAD + message.blocks.reduce((sum, b) => sum + blockTokens(b), 0);
    case "tool":
      return ROLE_OVERHEAD + textTokens(message.name) + textTokens(message.text) + BLOCK_OVERHEAD;
    case "developer": {
      const extra = [...(message.toolAdditions ?? []), ...(message.toolRemovals ?? [])].join(",");
      return ROLE_OVERHEAD + textTokens(message.text) + BLOCK_OVERHEAD + textTokens(extra);
    }
    default:
      return ROLE_OVERHEAD + textTokens(message.text) + BLOCK_OVERHEAD;
  }
}

export function toolsTokens(tools: readonly object[]): number {
  return tools.length === 0 ? 0 : textTokens(jsonArrayText(tools)) + BLOCK_OVERHEAD;
}

export function usageTotal(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.outputTokens;
}

export type Measurement = {
  /** The estimate for the next request: anchored when possible, else the heuristic. */
  totalTokens: number;
  /** The heuristic alone (surface + tools). */
  surfaceTokens: number;
  anchored: boolean;
};

/** What the meter reads: the events (index = seq − 1) and their projection. */
export type MeteredLog = { readonly events: readonly LogEvent[]; readonly surface: SurfaceProjector };

type Anchor = { usage: number; sumAt: number; seq: number };

export class TokenMeter {
  private readonly costs = new Map<number, number>();
  private projector: SurfaceProjector | undefined;
  private generation = -1;
  private counted = 0;
  private sum = 0;
  private anchor: Anchor | undefined;
  private newestHeaderSeq = 0;
  private scannedEvents = 0;
  private toolsKey: readonly object[] | undefined;
  private toolsCost = 0;

  /** The estimate for the surface as it is now, with these tool declarations. */
  measure(log: MeteredLog, tools: readonly object[] = []): Measurement {
    this.scanHeaders(log.events);
    const nodes = log.surface.surface;
    if (
      log.surface !== this.projector ||
      log.surface.replaceGeneration !== this.generation ||
      nodes.length < this.counted
    ) {
      this.resync(log, nodes);
    }
    for (let i = this.counted; i < nodes.length; i++) {
      const node = nodes[i]!;
      this.sum += this.costOf(node);
      this.noteAnchor(log.events[node.seq - 1], this.sum);
    }
    this.counted = nodes.length;
    const tokensOfTools = this.toolsCostOf(tools);
    const surfaceTokens = this.sum + tokensOfTools;
    const anchor = this.anchor;
    // The anchor holds while no header was logged after its reply (same model, tools and system prompt).
    if (anchor && this.newestHeaderSeq < anchor.seq && anchor.usage >= anchor.sumAt + tokensOfTools) {
      const totalTokens = Math.max(0, anchor.usage + (this.sum - anchor.sumAt));
      return { totalTokens, surfaceTokens, anchored: true };
    }
    return { totalTokens: surfaceTokens, surfaceTokens, anchored: false };
  }

  /** The heuristic sum of the surface nodes as of the last measurement (tools excluded). */
  get nodeTokens(): number {
    return this.sum;
  }

  /** Cached heuristic cost of a surface node. */
  costOf(node: SurfaceNode): number {
    let cost = this.costs.get(node.seq);
    if (cost === undefined) {
      cost = messageTokens(node.message);
      this.costs.set(node.seq, cost);
    }
    return cost;
  }

  /** After a replacement: re-add the cached costs of the surviving nodes; the anchor keeps its baseline. */
  private resync(log: MeteredLog, nodes: readonly SurfaceNode[]): void {
    const fresh = log.surface !== this.projector;
    this.projector = log.surface;
    this.generation = log.surface.replaceGeneration;
    if (fresh) this.anchor = undefined;
    this.sum = 0;
    for (const node of nodes) {
      this.sum += this.costOf(node);
      if (fresh) this.noteAnchor(log.events[node.seq - 1], this.sum);
    }
    this.counted = nodes.length;
  }

  private noteAnchor(event: LogEvent | undefined, sumAt: number): void {
    if (event?.type !== "assistant/message" || !event.data.usage) return;
    if (event.data.finish === "aborted" || event.data.finish === "error") return;
    this.anchor = { usage: usageTotal(event.data.usage), sumAt, seq: event.seq };
  }

  private scanHeaders(events: readonly LogEvent[]): void {
    if (events.length < this.scannedEvents) {
      this.scannedEvents = 0;
      this.newestHeaderSeq = 0;
    }
    for (let i = this.scannedEvents; i < events.length; i++) {
      const event = events[i]!;
      if (event.type === "request/header") this.newestHeaderSeq = event.seq;
    }
    this.scannedEvents = events.length;
  }

  private toolsCostOf(tools: readonly object[]): number {
    if (tools !== this.toolsKey) {
      this.toolsKey = tools;
      this.toolsCost = toolsTokens(tools);
    }
    return this.toolsCost;
  }
}
