/**
 * Prometheus metrics of one server, served at `GET /metrics` in the text format.
 *
 * Invariants:
 * - Counters of what happened (turns, steps, tool calls, tokens, cost, repairs) count durable events only,
 *   as each agent this server drives makes them durable (`onDurable`): they agree with the stored log.
 *   They are per process, as Prometheus expects: a restart starts them at zero.
 * - Gauges of what is (sessions driving, the ready queue, SSE clients) are read when scraped; the ready
 *   queue is the store's, so every server of one store reports the same queue.
 * - Labels are bounded: outcomes are closed unions, `model` is the configured model, `tool` a registered
 *   tool's name, `operation` a Store method's name. No session id is ever a label.
 * - The store timing wraps the Store object the server uses; it measures, it never changes a result.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { LogEvent } from "../log/events.js";
import { usageTotalsOf } from "../log/usage.js";
import type { Plugin } from "../loop/plugin.js";
import { costOf, type Price } from "../model/pricing.js";
import type { Store } from "../store/store.js";

const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export type MetricsSources = {
  stats(): { cached: number; running: number };
  readyQueue: Store["readyQueue"];
};

export class ServerMetrics {
  readonly registry = new Registry();
  readonly turns = this.counter("bdsh_turns_total", "Turns ended, by outcome (turn/end reason)", ["outcome"]);
  readonly steps = this.counter("bdsh_steps_total", "Steps ended, by outcome (step/end result)", ["outcome"]);
  readonly modelRequests = new Histogram({
    name: "bdsh_model_request_duration_seconds",
    help: "Model requests (one per attempt), from send to the reply's end, by model and outcome",
    labelNames: ["model", "outcome"],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly firstToken = new Histogram({
    name: "bdsh_model_time_to_first_token_seconds",
    help: "From a model request's send to its first streamed text or reasoning, by model",
    labelNames: ["model"],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly tokens = this.counter("bdsh_tokens_total", "Tokens of model requests, by model and kind", [
    "model",
    "kind",
  ]);
  readonly cost = this.counter(
    "bdsh_cost_usd_total",
    "Cost of model requests in USD (when priced), by model",
    ["model"],
  );
  readonly toolCalls = this.counter("bdsh_tool_calls_total", "Tool calls ended, by tool and outcome", [
    "tool",
    "outcome",
  ]);
  readonly approvalsWaiting = new Gauge({
    name: "bdsh_approvals_waiting",
    help: "Approvals and questions asked by sessions driven here and not answered yet",
    registers: [this.registry],
  });
  readonly takeovers = this.counter(
    "bdsh_lease_takeovers_total",
    "Sessions taken over from a holder whose lease lapsed with a turn open",
    [],
  );
  readonly repairs = this.counter(
    "bdsh_orphan_repairs_total",
    "Interrupted turns closed by repair (turn/end interrupted, R1)",
    [],
  );
  readonly storeLatency = new Histogram({
    name: "bdsh_store_operation_duration_seconds",
    help: "Store operations as the server calls them, by operation",
    labelNames: ["operation"],
    buckets: STORE_BUCKETS,
    registers: [this.registry],
  });
  readonly sseClients = new Gauge({
    name: "bdsh_sse_clients",
    help: "Open event streams (GET /v1/sessions/:id/events)",
    registers: [this.registry],
  });

  constructor(sources: MetricsSources) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: "bdsh_sessions_driving",
      help: "Sessions whose turn this server is driving now",
      registers: [this.registry],
      collect() {
        this.set(sources.stats().running);
      },
    });
    new Gauge({
      name: "bdsh_sessions_cached",
      help: "Sessions whose agent this server holds in memory (driving or idle)",
      registers: [this.registry],
      collect() {
        this.set(sources.stats().cached);
      },
    });
    const ready = () => sources.readyQueue();
    new Gauge({
      name: "bdsh_sessions_waiting",
      help: "Sessions with turn input waiting (the store's ready queue, all servers)",
      registers: [this.registry],
      async collect() {
        this.set((await ready()).sessions);
      },
    });
    new Gauge({
      name: "bdsh_ready_queue_depth",
      help: "Turn inputs (follow-ups and steers) waiting in the ready queue, all servers",
      registers: [this.registry],
      async collect() {
        this.set((await ready()).items);
      },
    });
    new Gauge({
      name: "bdsh_ready_queue_oldest_age_seconds",
      help: "Age of the oldest waiting turn input (0 when none waits)",
      registers: [this.registry],
      async collect() {
        const { oldestAt } = await ready();
        this.set(oldestAt ? Math.max(0, (Date.now() - Date.parse(oldestAt)) / 1000) : 0);
      },
    });
  }

  /** The exposition (`text/plain; version=0.0.4`). */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Counts one durable event of a session driven here. */
  observe(event: LogEvent, price: Price | undefined): void {
    switch (event.type) {
      case "turn/end":
        this.turns.inc({ outcome: event.data.reason });
        if (event.data.reason === "interrupted") this.repairs.inc();
        return;
      case "step/end":
        this.steps.inc({ outcome: event.data.result });
        return;
      case "tool/result":
        if (event.data.surfaceOp) return; // C12: a pruned copy, not a call
        this.toolCalls.inc({ tool: event.data.name, outcome: event.data.isError ? "error" : "ok" });
        return;
      case "assistant/message": {
        if (!event.data.usage) return;
        const totals = usageTotalsOf(event.data.usage);
        const model = event.data.model;
        this.tokens.inc({ model, kind: "input" }, totals.input);
        this.tokens.inc({ model, kind: "cached_input" }, totals.cachedInput);
        this.tokens.inc({ model, kind: "output" }, totals.output);
        const cost = costOf(totals, price);
        if (cost !== undefined) this.cost.inc({ model }, cost);
        return;
      }
      case "approval/requested":
      case "question/asked":
        this.approvalsWaiting.inc();
        return;
      case "approval/answered":
      case "question/answered":
        this.approvalsWaiting.dec();
        return;
      default:
        return;
    }
  }

  private counter(name: string, help: string, labelNames: string[]): Counter {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }
}

/** The per-agent half: durable events, and model request timing from the request hook and live deltas. */
export function metricsPlugin(metrics: ServerMetrics, price: Price | undefined): Plugin {
  return {
    name: "metrics",
    setup(ctx) {
      ctx.log.onDurable((events) => {
        for (const event of events) metrics.observe(event, price);
      });
      let sent: { at: number; first: boolean } | undefined;
      const model = ctx.model.id;
      ctx.hooks.onWaterfall(
        "agent/request",
        (state) => {
          sent = { at: performance.now(), first: false };
          return state;
        },
        { plugin: "metrics" },
      );
      ctx.onDelta(() => {
        if (!sent || sent.first) return;
        sent.first = true;
        metrics.firstToken.observe({ model }, (performance.now() - sent.at) / 1000);
      });
      ctx.log.onEvents((events) => {
        for (const event of events) {
          if (!sent || (event.type !== "assistant/message" && event.type !== "assistant/attempt")) continue;
          const outcome = event.type === "assistant/message" ? "ok" : "error";
          metrics.modelRequests.observe({ model, outcome }, (performance.now() - sent.at) / 1000);
          sent = undefined;
        }
      });
    },
  };
}

/** The store with every method call timed into `bdsh_store_operation_duration_seconds`. */
export function timedStore(store: Store, metrics: ServerMetrics): Store {
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function" || typeof property !== "string") return value;
      if (property === "follow" || property === "subscribe") return value.bind(target);
      return (...args: unknown[]) => {
        const started = performance.now();
        const result = value.apply(target, args);
        if (!(result instanceof Promise)) return result;
        return result.finally(() =>
          metrics.storeLatency.observe({ operation: property }, (performance.now() - started) / 1000),
        );
      };
    },
  });
}
