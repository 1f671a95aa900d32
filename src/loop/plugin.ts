/**
 * A plugin is `{ name, needs?, uses?, setup(ctx) }` (ARCHITECTURE "Layers"): it registers hook listeners,
 * tools, prompt sections, runtime contexts and tool services on one agent. The loop knows hooks, never
 * plugins; the default behaviour is the list in `presets/standard.ts`.
 *
 * A plugin is given capabilities, not the store: the context holds what every plugin may use (its own
 * session's log, inbox, hooks, tools, the model), and anything reaching further is declared — `needs`
 * names the store-backed capabilities (`StoreCapabilities`, each a narrow view) and `uses` names the other
 * plugins whose API it calls (`PluginApiMap`). A capability or API the plugin did not declare throws when
 * asked for, so what a plugin can touch is read off its declaration.
 */
import type { HookBus } from "../hooks/hook-bus.js";
import type { EventType, LogEvent, MessageAbout, NewEvent, UserSource } from "../log/events.js";
import type { Redactor } from "../log/redact.js";
import type { SurfaceProjector } from "../log/surface.js";
import type { ModelAdapter, ModelRequest, ToolSpec } from "../model/types.js";
import type { AppendDurability, InboxItem, SessionRow } from "../store/store.js";
import type { ApprovalPolicy, ToolServiceMap, ToolSessionInfo } from "../tools/types.js";
import type { LiveDelta } from "./agent.js";
import type { AgentToolsControl } from "./agent-tools.js";
import type { StoreCapabilities } from "./capabilities.js";
import type { ModelSettings } from "./model-settings.js";
import type { PromptRegistry } from "./prompt.js";

/** Read access to the session log. */
/**
 * `exclusive`'s options: how long to wait for the lease, its TTL, and the durability of the section's
 * closing append (default `disk`, as anything a user asked for; `commit` for what is only derived, e.g. a
 * model-written title, which a power loss may cost and the next durability point writes anyway).
 */
export type ExclusiveOptions = { waitMs?: number; ttlMs?: number; durability?: AppendDurability };

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
  /** The items pending for this session now (a read of the store). */
  pending(): Promise<readonly InboxItem[]>;
  /** Takes pending items out unclaimed (an answer consumed by the tool that waited for it). */
  discard(ids: readonly string[]): Promise<number>;
  /**
   * Says this plugin queued input for this session by a write of its own (a goal round's claim): the agent
   * reads the inbox again before it decides it is idle, instead of waiting for the store's notification,
   * which may arrive after the drive has ended.
   */
  changed(): void;
  /** Called when this session's inbox may have changed (an item added or taken, a resync). */
  watch(listener: () => void): () => void;
};

/** This session's own row, read-only except for its title. */
export type SessionRecord = {
  /**
   * The row: while plugins set up, the one the opener just read; in a drive's first pre-step, the one read
   * with the log on taking the lease; otherwise a read of the store. Fresh enough for the archived flag.
   */
  read(): Promise<Readonly<SessionRow> | undefined>;
  setTitle(title: string): Promise<void>;
};

/**
 * What plugins offer each other and the agent's owner, by name. A plugin adds its entry by declaration
 * merging where its API is defined, provides it with `ctx.provide`, and a plugin that calls it lists the
 * name in `uses`. The CLI and the server reach these through `Agent` methods (presets/standard-agent.ts).
 */
// biome-ignore lint/suspicious/noEmptyInterface: extended by declaration merging where plugin APIs are defined.
export interface PluginApiMap {}

export type ServiceRegistry = {
  get<K extends keyof ToolServiceMap>(name: K): ToolServiceMap[K] | undefined;
  require<K extends keyof ToolServiceMap>(name: K): ToolServiceMap[K];
  set<K extends keyof ToolServiceMap>(name: K, service: ToolServiceMap[K]): void;
  /** Wraps the service set under `name`, if any, with `wrap` (a server's job tracking around the jobs). */
  decorate<K extends keyof ToolServiceMap>(
    name: K,
    wrap: (inner: ToolServiceMap[K]) => ToolServiceMap[K],
  ): void;
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
  /** This session's row (title, parent, archived), read when asked; only the title can be set. */
  sessionRecord: SessionRecord;
  hooks: HookBus;
  prompt: PromptRegistry;
  /** The services the agent's tools are given (`ToolExec.services`): a plugin sets those it offers. */
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
    options?: ExclusiveOptions,
  ): Promise<T>;
  /** A store-backed capability this plugin listed in `needs` (throws for one it did not). */
  capability<K extends keyof StoreCapabilities>(name: K): StoreCapabilities[K];
  /** Offers this plugin's API under `name` to the plugins that list it in `uses`, and to the agent's owner. */
  provide<K extends keyof PluginApiMap>(name: K, api: PluginApiMap[K]): void;
  /** Another plugin's API this plugin listed in `uses`; undefined when no plugin of the agent offers it. */
  use<K extends keyof PluginApiMap>(name: K): PluginApiMap[K] | undefined;
};

export type Plugin = {
  name: string;
  /** The store-backed capabilities this plugin reaches (`ctx.capability`). */
  needs?: readonly (keyof StoreCapabilities)[];
  /** The other plugins' APIs this plugin calls (`ctx.use`). */
  uses?: readonly (keyof PluginApiMap)[];
  setup(ctx: PluginContext): void | Promise<void>;
};

/** A plugin asked for a capability or an API it did not declare. */
export class UndeclaredCapabilityError extends Error {
  constructor(plugin: string, field: "needs" | "uses", name: string) {
    super(`plugin "${plugin}" asked for "${name}" without listing it in its \`${field}\``);
  }
}

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
    decorate: (name, wrap) => {
      if (services.has(name as string))
        services.set(name as string, wrap(services.get(name as string) as never));
    },
  };
}
