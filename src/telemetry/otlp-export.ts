/**
 * The OpenTelemetry SDK for `bdsh serve` and `bdsh run`: traces exported over OTLP/HTTP
 * when the standard `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set.
 *
 * Invariants:
 * - Unset (or `OTEL_SDK_DISABLED=true`), nothing is imported: the SDK and the exporter load lazily, so a
 *   process without an endpoint starts and runs exactly as before (the API stays a no-op).
 * - The endpoint comes from the given environment (the standard rule: `_TRACES_ENDPOINT` as is, else
 *   `ENDPOINT` + `/v1/traces`); the exporter reads the rest itself (headers, timeout);
 *   spans are batched off the hot path, and `shutdown()` flushes what is queued before the process exits.
 * - Registering installs the W3C trace-context propagator and an AsyncLocalStorage context manager, which
 *   the trace carrier on inbox rows and the tool spans rely on.
 */
export type TracingHandle = { flush(): Promise<void>; shutdown(): Promise<void> };

export function otlpTracesConfigured(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** The traces URL the standard variables name: `_TRACES_ENDPOINT` as is, else `ENDPOINT` + `/v1/traces`. */
export function tracesUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined;
}

/** Starts the SDK when an endpoint is configured; `undefined` when tracing stays off. */
export async function startOtlpTracing(
  env: NodeJS.ProcessEnv,
  serviceName = "bdsh",
): Promise<TracingHandle | undefined> {
  if (!otlpTracesConfigured(env)) return undefined;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-node"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
    ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(env) }))],
  });
  provider.register();
  return { flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}
