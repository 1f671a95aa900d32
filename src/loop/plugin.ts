/**
 * A plugin is `{ name, setup(ctx) }` (ARCHITECTURE "Layers"): it registers hook listeners, tools, prompt
 * sections, runtime contexts and services on one agent. The loop knows hooks, never plugins; the default
 * behaviour is the list in `presets/standard.ts`.
 */
import type { HookBus } from "../hooks/hook-bus.js";
import type { EventType, LogEvent, MessageAbout, NewEvent, UserSource } from "../log/events.js";
import type { Redactor } from "../log/redact.js";
import type { SurfaceProjector } from "../log/surface.js";
import type { ModelAdapter, ModelRequest, ToolSpec } from "../model/types.js";
import type { Store } from "../store/store.js";
import type { ApprovalPolicy, ToolServiceMap, ToolSessionInfo } from "../tools/types.js";
import type { LiveDelta } from "./agent.js";
import type { AgentToolsControl } from "./agent-tools.js";
import type { ModelSettings } from "./model-settings.js";
import type { PromptRegistry } from "./prompt.js";

/** Read access to the session log. */
export type LogView = {
  readonly sessionId: string;
  readonly events: readonly LogEvent[];
  readonly surface: SurfaceProjector;
  /** Seq of the last event (durable or buffered). */
  readonly seq: number;
  last<K extends EventType>(type: K): Extract<LogEvent, { type: K }> | undefined;
  /** Every event as it is added (buffered), and once durable. */
  onEvents(listener: (events: readonly LogEvent[]) => void): () => void;
  onDurable(listener: (events: readonly LogEvent[]) => void): () => void;
};

/**
 * Write access for plugins that own events of their own (compaction, goals): only while a hook of this
 * agent is running, because only then does the driver hold the session's lease. Seqs are given at `add`;
 * `flush` makes them durable (fenced by the lease).
 */
export type PluginLog = LogView & {
  add(...events: NewEvent[]): LogEvent[];
  flush(): Promise<void>;
};

/** The agent's durable inbox (L4), for plugins that queue input (goal rounds, notices, schedules). */
export type InboxControl = {
  /** `about`: what the message is about, for people's views (stored on its `user/message`, never sent). */
  followup(text: string, source: UserSource, about?: MessageAbout): Promise<unknown>;
  steer(text: string, source: UserSource, about?: MessageAbout): Promise<unknown>;
  inject(text: string, source: UserSource, about?: MessageAbout): Promise<unknown>;
};

export type ServiceRegistry = {
  get<K extends keyof ToolServiceMap>(name: K): ToolServiceMap[K] | undefined;
  require<K extends keyof ToolServiceMap>(name: K): ToolServiceMap[K];
  set<K extends keyof ToolServiceMap>(name: K, service: ToolServiceMap[K]): void;
};

/** Facts about where and how the agent runs; they may change between steps (L13 reports changes). */
export type RuntimeFacts = {
  cwd: string;
  sandbox: "read-only" | "workspace-write" | "danger-full-access";
  approval: ApprovalPolicy;
  /** A delegated subagent (S1): approval is pinned to never. */
  delegated: boolean;
};

export type PluginContext = {
  sessionId: string;
  /** The session's kind (main, fork, subagent, ralph) and delegation depth: what tool availability checks. */
  session: ToolSessionInfo;
  store: Store;
  hooks: HookBus;
  prompt: PromptRegistry;
  services: ServiceRegistry;
  /** The agent's one tool registry: a plugin registers its tools here while it is set up. */
  tools: AgentToolsControl;
  log: PluginLog;
  inbox: InboxControl;
  model: ModelSettings;
  /** The model adapter, for side calls that reuse the session's prefix (C6 compaction summaries). */
  adapter: ModelAdapter;
  /** The request the next step would send now: same system, tools and messages (C6: prefix reuse). */
  currentRequest(signal?: AbortSignal): ModelRequest;
  /** The tool declarations of that request, without building it (the per-step plugins ask for these). */
  currentTools(): readonly ToolSpec[];
  workspace: string;
  facts: RuntimeFacts;
  /** The session's secret values, for plugins that send text out of the log (traces). */
  redactor: Redactor;
  /** Live text and reasoning deltas as they stream (already redacted); never durable. */
  onDelta(listener: (delta: LiveDelta) => void): () => void;
  /**
   * The log is the only truth for a plugin's state: `fold` is given every event of `types` in seq order —
   * those already read, then each one as it is added or read from the store (another server's turns, on
   * taking the session over) — so the state is the same on whichever process opens the session. A plugin's
   * own event types are declared in `PluginEventDataMap` (log/events.ts).
   */
  fold<K extends EventType>(
    types: readonly K[],
    fold: (event: Extract<LogEvent, { type: K }>) => void,
  ): () => void;
  /** Writes outside a drive, through the agent's log under the session lease (`Agent.exclusive`). */
  exclusive<T>(
    fn: (log: PluginLog, signal: AbortSignal) => Promise<T>,
    options?: { waitMs?: number; ttlMs?: number },
  ): Promise<T>;
};

export type Plugin = {
  name: string;
  setup(ctx: PluginContext): void | Promise<void>;
};

export function createServiceRegistry(): ServiceRegistry {
  const services = new Map<string, unknown>();
  return {
    get: (name) => services.get(name as string) as never,
    require(name) {
      if (!services.has(name as string)) throw new Error(`service "${String(name)}" is not available`);
      return services.get(name as string) as never;
    },
    set: (name, service) => {
      services.set(name as string, service);
    },
  };
}
