/**
 * GenAI traces: spans for turns, model requests, tool calls and compactions, following
 * the OpenTelemetry GenAI semantic conventions, built from the agent's hooks and log events.
 *
 * Span tree of one turn:
 *   invoke_agent bdsh                (turn/start … turn/end; parent: the trace context of the claimed input)
 *   ├─ chat <model>                  (one per attempt: agent/request … assistant/message | assistant/attempt)
 *   ├─ execute_tool <name>           (tool/call … tool/result; the body runs with this span active)
 *   │   └─ invoke_agent bdsh         (a subagent's turn: its task row carries this span's context, S1)
 *   └─ compaction                    (compaction/start … compaction/end)
 *
 * Invariants:
 * - Off costs nothing: without a registered tracer provider (`tracingEnabled()`), setup registers nothing.
 * - Observation only: no listener changes a value it is handed, and none throws into the loop.
 * - No text leaves the process unless `captureContent` is set (the config's `telemetry.capture_content`),
 *   and then only through the session's redactor. Tool arguments and results are never attributes.
 * - Token counts follow the conventions: `gen_ai.usage.input_tokens` includes cached input (our log keeps
 *   them disjoint, M20; src/log/usage.ts), the cache reads and writes are given apart as well.
 */
import {
  type Attributes,
  type Context,
  context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { LogEvent } from "../log/events.js";
import { usageTotalsOf } from "../log/usage.js";
import type { Plugin, PluginContext } from "../loop/plugin.js";
import { contextFromMetadata, tracingEnabled } from "../loop/trace-carrier.js";

export const TRACER_NAME = "better-dsh";
/** `gen_ai.agent.name` and the `invoke_agent` span's name suffix. */
export const AGENT_NAME = "bdsh";

export type GenAiTracingOptions = {
  /** Record prompts and completions (`gen_ai.input.messages`/`gen_ai.output.messages`), redacted. */
  captureContent?: boolean;
  /** Default: the global tracer provider's `better-dsh` tracer. */
  tracer?: Tracer;
};

type Open = { span: Span; ctx: Context };

export function genAiTracingPlugin(options: GenAiTracingOptions = {}): Plugin {
  return {
    name: "genai-tracing",
    setup(ctx) {
      if (!options.tracer && !tracingEnabled()) return;
      new TurnTracer(ctx, options.tracer ?? trace.getTracer(TRACER_NAME), options.captureContent === true);
    },
  };
}

class TurnTracer {
  private turn: Open | undefined;
  private chat: Span | undefined;
  private readonly attempts = new Map<string, number>();
  private readonly tools = new Map<string, Open>();
  private compaction: Span | undefined;

  constructor(
    private readonly ctx: PluginContext,
    private readonly tracer: Tracer,
    private readonly captureContent: boolean,
  ) {
    const plugin = { plugin: "genai-tracing" };
    ctx.hooks.onSerial("agent/turn-start", (event) => this.startTurn(event.turn, event.claimed), plugin);
    ctx.hooks.onWaterfall(
      "agent/request",
      (state) => {
        this.startChat(state.turn, state.step, state.request.messages);
        return state;
      },
      plugin,
    );
    // The tool's body runs with its span active, so a subagent's task row carries it (trace-carrier.ts).
    ctx.hooks.onWrap(
      "tools/execute",
      (input, next) => {
        const open = this.tools.get(input.exec.callId);
        return open ? context.with(open.ctx, () => next(input)) : next(input);
      },
      plugin,
    );
    ctx.log.onEvents((events) => {
      for (const event of events) this.observe(event);
    });
    ctx.hooks.onSerial("agent/close", () => this.endAll("closed"), plugin);
  }

  private get base(): Attributes {
    return {
      "gen_ai.provider.name": this.ctx.adapter.provider,
      "gen_ai.conversation.id": this.ctx.sessionId,
    };
  }

  private startTurn(turn: number, claimed: readonly { metadata: Record<string, unknown> }[]): void {
    this.endAll("closed"); // a turn whose end was never seen (a lost lease): its spans end, marked
    const parents = claimed.map((item) => contextFromMetadata(item.metadata));
    const parent = parents.find((c) => trace.getSpanContext(c)) ?? ROOT_CONTEXT;
    const links: Link[] = [];
    for (const other of parents) {
      const spanContext = trace.getSpanContext(other);
      if (spanContext) links.push({ context: spanContext });
    }
    const span = this.tracer.startSpan(
      `invoke_agent ${AGENT_NAME}`,
      {
        kind: SpanKind.INTERNAL,
        links,
        attributes: {
          ...this.base,
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": AGENT_NAME,
          "gen_ai.agent.id": this.ctx.sessionId,
          "gen_ai.request.model": this.ctx.model.id,
          "bdsh.session.kind": this.ctx.session.kind,
          "bdsh.turn": turn,
        },
      },
      parent,
    );
    this.turn = { span, ctx: trace.setSpan(parent, span) };
  }

  private startChat(turn: number, step: number, messages: unknown): void {
    this.chat?.end();
    const key = `${turn}:${step}`;
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.clear();
    this.attempts.set(key, attempt);
    const attributes: Attributes = {
      ...this.base,
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": this.ctx.model.id,
      "gen_ai.request.max_tokens": this.ctx.model.maxOutputTokens,
      "bdsh.turn": turn,
      "bdsh.step": step,
      "bdsh.request.attempt": attempt,
    };
    if (this.captureContent) attributes["gen_ai.input.messages"] = this.redacted(messages);
    this.chat = this.tracer.startSpan(
      `chat ${this.ctx.model.id}`,
      { kind: SpanKind.CLIENT, attributes },
      this.parent(),
    );
  }

  private observe(event: LogEvent): void {
    switch (event.type) {
      case "assistant/message": {
        const span = this.chat;
        if (!span) return;
        this.chat = undefined;
        const { data } = event;
        span.setAttribute("gen_ai.response.model", data.model);
        span.setAttribute("gen_ai.response.finish_reasons", [data.finish]);
        if (data.usage) span.setAttributes(usageAttributes(data.usage));
        if (data.interrupted) span.setAttribute("error.type", "ABORTED");
        if (this.captureContent)
          span.setAttribute(
            "gen_ai.output.messages",
            this.redacted([{ role: "assistant", parts: data.blocks, finish_reason: data.finish }]),
          );
        span.end();
        return;
      }
      case "assistant/attempt": {
        const span = this.chat;
        if (!span) return;
        this.chat = undefined;
        failed(span, event.data.error.code, event.data.error.message);
        span.end();
        return;
      }
      case "tool/call": {
        const parent = this.parent();
        const span = this.tracer.startSpan(
          `execute_tool ${event.data.name}`,
          {
            kind: SpanKind.INTERNAL,
            attributes: {
              ...this.base,
              "gen_ai.operation.name": "execute_tool",
              "gen_ai.tool.name": event.data.name,
              "gen_ai.tool.call.id": event.data.callId,
              "gen_ai.tool.type": "function",
            },
          },
          parent,
        );
        this.tools.set(event.data.callId, { span, ctx: trace.setSpan(parent, span) });
        return;
      }
      case "tool/result": {
        if (event.data.surfaceOp) return; // C12: a pruned copy, not a call ending
        const open = this.tools.get(event.data.callId);
        if (!open) return;
        this.tools.delete(event.data.callId);
        open.span.setAttribute("bdsh.tool.outcome", event.data.isError ? "error" : "ok");
        if (event.data.durationMs !== undefined)
          open.span.setAttribute("bdsh.tool.duration_ms", event.data.durationMs);
        if (event.data.isError) failed(open.span, event.data.code ?? "TOOL_ERROR");
        open.span.end();
        return;
      }
      case "subagent/started":
        trace.getSpan(this.parentOfTools())?.addEvent("bdsh.subagent.started", {
          "bdsh.subagent.id": event.data.childId,
          "bdsh.subagent.mode": event.data.mode,
        });
        return;
      case "compaction/start":
        this.compaction?.end();
        this.compaction = this.tracer.startSpan(
          "compaction",
          { attributes: { ...this.base, "bdsh.compaction.reason": event.data.reason } },
          this.parent(),
        );
        return;
      case "compaction/summary":
        this.compaction?.setAttributes({
          "bdsh.compaction.tokens_before": event.data.tokensBefore ?? 0,
          "bdsh.compaction.tokens_after": event.data.tokensAfter ?? 0,
          ...(event.data.usage ? usageAttributes(event.data.usage) : {}),
        });
        return;
      case "compaction/end": {
        const span = this.compaction;
        if (!span) return;
        this.compaction = undefined;
        span.setAttribute("bdsh.compaction.ok", event.data.ok);
        if (event.data.replaced !== undefined)
          span.setAttribute("bdsh.compaction.replaced", event.data.replaced);
        if (!event.data.ok) failed(span, "COMPACTION_FAILED");
        span.end();
        return;
      }
      case "turn/end": {
        const open = this.turn;
        if (!open) return;
        this.endAll(event.data.reason);
        open.span.setAttribute("bdsh.turn.reason", event.data.reason);
        if (event.data.error) failed(open.span, event.data.error.code, event.data.error.message);
        open.span.end();
        this.turn = undefined;
        return;
      }
      default:
        return;
    }
  }

  private parent(): Context {
    return this.turn?.ctx ?? ROOT_CONTEXT;
  }

  /** The subagent tool's span when one call is open, else the turn's. */
  private parentOfTools(): Context {
    const open = [...this.tools.values()];
    return open.length === 1 ? (open[0] as Open).ctx : this.parent();
  }

  /** Ends what a turn left open (a crash repair, a cancel): spans never dangle. */
  private endAll(reason: string): void {
    for (const span of [this.chat, this.compaction, ...[...this.tools.values()].map((o) => o.span)]) {
      if (!span) continue;
      failed(span, reason === "aborted" ? "ABORTED" : "INTERRUPTED");
      span.end();
    }
    this.chat = undefined;
    this.compaction = undefined;
    this.tools.clear();
    if (reason === "closed" && this.turn) {
      failed(this.turn.span, "INTERRUPTED");
      this.turn.span.end();
      this.turn = undefined;
    }
  }

  private redacted(value: unknown): string {
    return this.ctx.redactor.text(JSON.stringify(value) ?? "");
  }
}

function usageAttributes(usage: Parameters<typeof usageTotalsOf>[0]): Attributes {
  const totals = usageTotalsOf(usage);
  return {
    "gen_ai.usage.input_tokens": totals.input + totals.cachedInput,
    "gen_ai.usage.output_tokens": totals.output,
    "gen_ai.usage.cache_read.input_tokens": totals.cachedInput,
    "gen_ai.usage.cache_creation.input_tokens": totals.cacheWriteInput ?? 0,
  };
}

function failed(span: Span, code: string, message?: string): void {
  span.setAttribute("error.type", code);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
}
