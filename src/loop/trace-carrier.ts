/**
 * Trace context on inbox rows: a turn continues the trace of whatever queued its input,
 * on whichever server claims the row.
 *
 * Invariants:
 * - The W3C `traceparent`/`tracestate` of the active context ride in the row's existing `metadata` JSON,
 *   under `trace`; no column, so both stores carry it as they are.
 * - With no OpenTelemetry SDK registered the API's propagator is a no-op: nothing is written and nothing
 *   costs more than one call. A malformed carrier (the row is store data, not trusted) yields no parent.
 * - A leaf module: it imports the OpenTelemetry API (and the store's types), so the loop, the server and
 *   the subagents may use it.
 */
import {
  type Context,
  context,
  ProxyTracerProvider,
  propagation,
  ROOT_CONTEXT,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import type { NewInboxItem } from "../store/store.js";

export type TraceCarrier = { traceparent: string; tracestate?: string };

const MAX_HEADER_CHARS = 512;

/** `metadata` with the active trace context added under `trace` (unchanged when there is none). */
export function withTraceContext(
  metadata: Record<string, unknown> | undefined,
  from: Context = context.active(),
): Record<string, unknown> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(from, carrier);
  if (!carrier.traceparent) return metadata;
  const trace: TraceCarrier = { traceparent: carrier.traceparent };
  if (carrier.tracestate) trace.tracestate = carrier.tracestate;
  return { ...metadata, trace };
}

/** An inbox item carrying the active trace context (or `from`'s), when there is one. */
export function traced(item: NewInboxItem, from?: Context): NewInboxItem {
  const metadata = withTraceContext(item.metadata, from);
  return metadata === item.metadata ? item : { ...item, metadata };
}

/** The context a row's `metadata.trace` names, or the root context. */
export function contextFromMetadata(metadata: Record<string, unknown> | undefined): Context {
  const value = metadata?.trace;
  if (!value || typeof value !== "object") return ROOT_CONTEXT;
  const carrier = value as Record<string, unknown>;
  return contextFromHeaders({ traceparent: carrier.traceparent, tracestate: carrier.tracestate });
}

const headerGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === "string" && value.length <= MAX_HEADER_CHARS ? value : undefined;
  },
};

/** The context of incoming `traceparent`/`tracestate` headers (an HTTP request), or the root context. */
export function contextFromHeaders(headers: Record<string, unknown>): Context {
  return propagation.extract(ROOT_CONTEXT, headers, headerGetter);
}

/**
 * Whether a tracer provider is registered (an SDK started by `bdsh serve`/`run`, or by the host program):
 * without one, the tracing plugin registers nothing and the loop pays nothing.
 */
export function tracingEnabled(): boolean {
  const provider = trace.getTracerProvider();
  if (!(provider instanceof ProxyTracerProvider)) return true;
  return provider.getDelegateTracer("better-dsh") !== undefined;
}
