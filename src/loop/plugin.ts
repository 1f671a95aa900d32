/**
 * A plugin is `{ name, setup(ctx) }` (ARCHITECTURE "Layers"): it registers hook listeners, tools, prompt
 * sections, runtime contexts and services on one agent. The loop knows hooks, never plugins; the default
 * behaviour is the list in `presets/standard.ts`.
 */
import type { HookBus } from "../hooks/hook-bus.js";
import type { LogEvent } from "../log/events.js";
import type { SurfaceProjector } from "../log/surface.js";
import type { Store } from "../store/store.js";
import type { ToolServiceMap } from "../tools/types.js";
import type { ModelSettings } from "./model-settings.js";
import type { PromptRegistry } from "./prompt.js";

/** Read access to the session log for plugins (they never write it directly). */
export type LogView = {
  readonly sessionId: string;
  readonly events: readonly LogEvent[];
  readonly surface: SurfaceProjector;
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
  approval: "ask" | "never";
  /** A delegated subagent (S1): approval is pinned to never. */
  delegated: boolean;
};

export type PluginContext = {
  sessionId: string;
  store: Store;
  hooks: HookBus;
  prompt: PromptRegistry;
  services: ServiceRegistry;
  log: LogView;
  model: ModelSettings;
  workspace: string;
  facts: RuntimeFacts;
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
