/**
 * C1: the surface, the model-visible history, as a pure function of the events.
 *
 * - Message events (`system/message`, `developer/message`, `user/message`, `assistant/message`,
 *   `tool/result`) become nodes, in seq order. Every other event is log-only.
 * - An event with `surfaceOp: replace(startSeq, endSeq)` hides the nodes from the one made by `startSeq`
 *   through the one made by `endSeq`, by position, and takes their place. Ranges address nodes, not raw
 *   seqs, so a later compaction can swallow an earlier checkpoint (C5 "a previous checkpoint is merged").
 * - Node 0 (the first node, the system prompt when there is one) can only be replaced by a system message.
 *
 * `SurfaceProjector` applies events one at a time so a caller can keep the surface up to date cheaply;
 * `surfaceOf` is the one-shot form.
 */
import { assertNever, isCoreEvent, type LogEvent, type SurfaceOp } from "./events.js";
import {
  type ImageRef,
  imageHandlesIn,
  type SurfaceMessage,
  type SurfaceNode,
  type ToolResultMessage,
  type UserMessage,
} from "./messages.js";

/** The tool whose results may carry an image handle (T22). */
export const READ_IMAGE_TOOL = "read_image";

function withImages(message: { images?: ImageRef[] }, text: string): void {
  const images = imageHandlesIn(text).map((found) => found.image);
  if (images.length > 0) message.images = images;
}

export class SurfaceOpError extends Error {
  readonly code = "INVALID_SURFACE_OP";
  constructor(
    message: string,
    readonly seq: number,
  ) {
    super(`event ${seq}: ${message}`);
    this.name = "SurfaceOpError";
  }
}

export class SurfaceProjector {
  private readonly nodes: SurfaceNode[] = [];
  /** Incremented on every replacement (C1 `replaceGeneration`): a new request series starts after one. */
  replaceGeneration = 0;

  get surface(): readonly SurfaceNode[] {
    return this.nodes;
  }

  messages(): SurfaceMessage[] {
    return this.nodes.map((n) => n.message);
  }

  apply(event: LogEvent): void {
    const message = messageOf(event);
    if (!message) return;
    const op = surfaceOpOf(event);
    const node: SurfaceNode = { seq: event.seq, message };
    if (!op) {
      this.nodes.push(node);
      return;
    }
    this.replace(op, node);
  }

  applyAll(events: Iterable<LogEvent>): this {
    for (const event of events) this.apply(event);
    return this;
  }

  private replace(op: SurfaceOp, node: SurfaceNode): void {
    const start = this.indexOfSeq(op.startSeq);
    const end = this.indexOfSeq(op.endSeq);
    if (start < 0 || end < 0) {
      const missing = start < 0 ? op.startSeq : op.endSeq;
      throw new SurfaceOpError(`replace range names seq ${missing}, which is not on the surface`, node.seq);
    }
    if (end < start)
      throw new SurfaceOpError(`replace range ${op.startSeq}..${op.endSeq} is reversed`, node.seq);
    if (start === 0 && node.message.role !== "system") {
      throw new SurfaceOpError("node 0 can only be replaced by a system message", node.seq);
    }
    this.nodes.splice(start, end - start + 1, node);
    this.replaceGeneration++;
  }

  private indexOfSeq(seq: number): number {
    // Nodes are mostly in seq order; a binary search would break after replacements, and ranges are
    // usually near the end, so scan backwards.
    for (let i = this.nodes.length - 1; i >= 0; i--) if (this.nodes[i]!.seq === seq) return i;
    return -1;
  }
}

export function surfaceOf(events: Iterable<LogEvent>): SurfaceNode[] {
  return [...new SurfaceProjector().applyAll(events).surface];
}

export function surfaceMessagesOf(events: Iterable<LogEvent>): SurfaceMessage[] {
  return new SurfaceProjector().applyAll(events).messages();
}

function surfaceOpOf(event: LogEvent): SurfaceOp | undefined {
  switch (event.type) {
    case "system/message":
    case "user/message":
    case "tool/result":
      return event.data.surfaceOp;
    default:
      return undefined;
  }
}

/** The model-visible message an event stands for, or undefined for log-only events. */
export function messageOf(event: LogEvent): SurfaceMessage | undefined {
  if (!isCoreEvent(event)) return undefined; // a plugin's own events are never model-visible
  switch (event.type) {
    case "system/message":
      return { role: "system", text: event.data.text };
    case "developer/message": {
      const m: SurfaceMessage = { role: "developer", text: event.data.text };
      if (event.data.toolAdditions) m.toolAdditions = event.data.toolAdditions;
      if (event.data.toolRemovals) m.toolRemovals = event.data.toolRemovals;
      return m;
    }
    case "user/message": {
      const m: UserMessage = { role: "user", text: event.data.text };
      // M10: only a person's own message (its `--attach` handles) may name images; other sources quote text.
      if (event.data.source === "human") withImages(m, event.data.text);
      return m;
    }
    case "assistant/message":
      return {
        role: "assistant",
        blocks: event.data.blocks,
        provider: event.data.provider,
        model: event.data.model,
      };
    case "tool/result": {
      const m: ToolResultMessage = {
        role: "tool",
        callId: event.data.callId,
        name: event.data.name,
        text: event.data.text,
      };
      if (event.data.isError) m.isError = true;
      // M10: a `read_image` result is the handle the tool made; no other tool's text can name an image.
      else if (event.data.name === READ_IMAGE_TOOL) withImages(m, event.data.text);
      return m;
    }
    case "session/start":
    case "session/end-seed":
    case "session/archived":
    case "session/title":
    case "session/cwd": // the runtime context tells the model (SP4)
    case "agent/status":
    case "agent/inbox/spliced":
    case "agent/error":
    case "turn/start":
    case "turn/end":
    case "step/start":
    case "step/end":
    case "assistant/attempt":
    case "request/header":
    case "request/context":
    case "llm/retry":
    case "llm/retry-started":
    case "tool/decision":
    case "tool/call":
    case "compaction/start":
    case "compaction/summary":
    case "compaction/end":
    case "compaction/prune":
    case "job/started":
    case "job/finished":
    case "goal/updated":
    case "goal/round":
    case "subagent/started":
    case "subagent/settled":
    case "approval/requested":
    case "approval/answered":
    case "approval/reviewed":
    case "question/asked":
    case "question/answered":
    case "answer/rejected":
    case "sandbox/git-repaired": // the model reads it in the command's result
    case "plan/mode":
    case "instructions/withheld":
      return undefined;
    default:
      return assertNever(event, "event");
  }
}
