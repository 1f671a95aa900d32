/**
 * Builds each model request as a pure function of the log (M23) and keeps the envelope honest (L11–L14).
 *
 * - The system prompt is node 0. A changed prompt is appended as a new system message on routes that take
 *   in-history updates, otherwise node 0 is replaced (L12). Nothing else ever rewrites history.
 * - `request/header` is logged when the envelope (provider, model, effort, output cap, tools, system
 *   prompt) changes; `request/context` when the route facts change (L11).
 * - When the model differs from the last header's, the model-switch notice is appended first (L14).
 * - Effort is fixed per session (M5): the logged header's effort wins unless this run chose one.
 * - Tools are declared in a stable order every step (SP8).
 */
import { createHash } from "node:crypto";
import { jsonArrayText } from "../log/json-text.js";
import type { SurfaceNode } from "../log/messages.js";
import type { SurfaceProjector } from "../log/surface.js";
import type { Effort, ModelRequest, ToolSpec } from "../model/types.js";
import type { ModelSettings } from "./model-settings.js";
import type { PromptRegistry } from "./prompt.js";
import type { SessionLog } from "./session-log.js";
import type { ToolHost } from "./tool-host.js";

export function modelSwitchNotice(from: string, to: string): string {
  return `[model changed: the assistant replies above were written by ${from}; from here on the session continues with ${to}]`;
}

export class RequestBuilder {
  private declared: ToolSpec[] = [];
  private visible: { of: ToolSpec[]; names: ReadonlySet<string> } | undefined;
  private toolsHash: { of: ToolSpec[]; hash: string } | undefined;
  private systemHash: { of: string; hash: string } | undefined;
  private systemScan: SystemScan | undefined;

  constructor(
    private readonly log: SessionLog,
    private readonly prompt: PromptRegistry,
    private readonly toolHost: () => ToolHost,
    private readonly model: ModelSettings,
  ) {}

  /** The declarations `build` puts in the request (as of the last `renderSystem`). */
  get tools(): readonly ToolSpec[] {
    return this.declared;
  }

  /** Renders the current system prompt for the tools on offer. */
  renderSystem(): string {
    this.declared = this.toolHost().declarations();
    // The host keeps one declarations array until the offer changes: its names are collected once per array.
    if (this.visible?.of !== this.declared)
      this.visible = { of: this.declared, names: new Set(this.declared.map((t) => t.name)) };
    return this.prompt.renderSystem(this.visible.names);
  }

  /** Makes sure node 0 is the system prompt; called at a turn's start, before any user input is added. */
  ensureSystem(where: { turn: number }): void {
    const first = this.log.surface.surface[0];
    if (first?.message.role === "system") return;
    const text = this.renderSystem();
    if (text) this.log.add({ type: "system/message", data: { text }, ...where });
  }

  /** Before a step's request: reconcile the system prompt, log header/context changes (L11, L12, L14). */
  prepare(where: { turn: number; step: number }, startsRequestSeries: boolean): void {
    const system = this.renderSystem();
    this.reconcileSystem(system, where, startsRequestSeries);
    const effort = this.effort();
    const header = {
      provider: this.model.provider,
      model: this.model.id,
      effort,
      maxTokens: this.model.maxOutputTokens,
      tools: this.declared.map((t) => t.name),
      toolsHash: this.hashTools(),
      systemHash: this.hashSystem(system),
    };
    const last = this.log.last("request/header");
    if (last && (last.data.provider !== header.provider || last.data.model !== header.model)) {
      this.log.add({
        type: "user/message",
        data: { text: modelSwitchNotice(last.data.model, header.model), source: "model-switch" },
        ...where,
      });
    }
    if (!last || JSON.stringify(last.data) !== JSON.stringify(header)) {
      this.log.add({ type: "request/header", data: header, ...where });
    }
    const context = {
      provider: this.model.provider,
      model: this.model.id,
      contextWindow: this.model.contextWindow,
      systemPromptUpdate: this.model.systemPromptUpdate,
    };
    const lastContext = this.log.last("request/context");
    if (!lastContext || JSON.stringify(lastContext.data) !== JSON.stringify(context)) {
      this.log.add({ type: "request/context", data: context, ...where });
    }
  }

  /** The request for the current surface. Called again for each retry (L10: same durable history). */
  build(signal: AbortSignal): ModelRequest {
    const messages = this.log.surface.messages();
    const head = messages[0];
    const system = head?.role === "system" ? head.text : "";
    return {
      model: this.model.id,
      system,
      messages: head?.role === "system" ? messages.slice(1) : messages,
      tools: this.declared,
      effort: this.effort(),
      maxTokens: this.model.maxOutputTokens,
      signal,
    };
  }

  private hashTools(): string {
    if (this.toolsHash?.of !== this.declared)
      this.toolsHash = { of: this.declared, hash: toolsHashOf(jsonArrayText(this.declared)) };
    return this.toolsHash.hash;
  }

  private hashSystem(system: string): string {
    if (this.systemHash?.of !== system) this.systemHash = { of: system, hash: hash(system) };
    return this.systemHash.hash;
  }

  private effort(): Effort {
    if (this.model.effortExplicit) return this.model.effort;
    const last = this.log.last("request/header");
    if (last && last.data.provider === this.model.provider && last.data.model === this.model.id) {
      return last.data.effort as Effort;
    }
    return this.model.effort;
  }

  /** The newest system node of the surface, scanning only nodes appended since the last call. */
  private latestSystem(): SurfaceNode | undefined {
    const surface = this.log.surface;
    const nodes = surface.surface;
    let scan = this.systemScan;
    if (
      scan?.surface !== surface ||
      scan.generation !== surface.replaceGeneration ||
      nodes.length < scan.scanned
    ) {
      scan = { surface, generation: surface.replaceGeneration, scanned: 0 };
      this.systemScan = scan;
    }
    for (let i = scan.scanned; i < nodes.length; i++) {
      if (nodes[i]!.message.role === "system") scan.latest = nodes[i]!;
    }
    scan.scanned = nodes.length;
    return scan.latest;
  }

  private reconcileSystem(text: string, where: { turn: number; step: number }, newSeries: boolean): void {
    const nodes = this.log.surface.surface;
    const current = this.latestSystem();
    if (current?.message.role === "system" && current.message.text === text) return;
    const head = nodes[0];
    if (head?.message.role !== "system") return; // ensureSystem runs at turn start; nothing to reconcile
    if (this.model.systemPromptUpdate === "in-history" && !newSeries) {
      this.log.add({ type: "system/message", data: { text }, ...where });
      return;
    }
    this.log.add({
      type: "system/message",
      data: { text, surfaceOp: { op: "replace", startSeq: head.seq, endSeq: head.seq } },
      ...where,
    });
  }
}

type SystemScan = { surface: SurfaceProjector; generation: number; scanned: number; latest?: SurfaceNode };

function hash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/**
 * The hash of a tool declarations text, remembered for the last few texts: every agent a server opens
 * declares the same tools (SP8), so each new agent would hash the same ~16 KB again. Comparing the text to a
 * remembered one costs far less than hashing it; a text seen once more replaces the oldest.
 */
const toolsHashes = new Map<string, string>();
function toolsHashOf(text: string): string {
  let known = toolsHashes.get(text);
  if (known === undefined) {
    known = hash(text);
    if (toolsHashes.size >= 8) toolsHashes.delete(toolsHashes.keys().next().value!);
    toolsHashes.set(text, known);
  }
  return known;
}
