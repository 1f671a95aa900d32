/**
 * better-dsh as a library: open a store, open an agent with the standard preset, send it input, read its
 * events. `bdsh run`, `chat` and `serve` use exactly this.
 *
 *   import { loadConfig, openStore, openAgent } from "better-dsh";
 *   const { config } = loadConfig({ home, cwd });
 *   const store = await openStore({ home, databaseUrl: process.env.DATABASE_URL });
 *   const { agent } = await openAgent({ store, config, workspace: cwd });
 *   agent.log.onDurable((events) => …);
 *   await agent.followup("fix the failing test");
 *   await agent.whenIdle();
 */
export { ConfigError, type LoadConfigOptions, loadConfig } from "./config/load.js";
export { bdshHome, databaseUrl } from "./config/paths.js";
export { type Config, DEFAULT_CONFIG } from "./config/schema.js";
export { HookBus } from "./hooks/hook-bus.js";
export * from "./log/events.js";
export * from "./log/messages.js";
export * from "./log/pairing.js";
export { eventJson } from "./log/serialize.js";
export { SurfaceProjector, surfaceMessagesOf, surfaceOf } from "./log/surface.js";
export { Agent, type AgentOptions, type LiveDelta } from "./loop/agent.js";
export type { AgentToolsControl } from "./loop/agent-tools.js";
export type { StoreCapabilities } from "./loop/capabilities.js";
export { forkSession } from "./loop/fork.js";
export { type HeadlessResult, runHeadless } from "./loop/headless.js";
export type * from "./loop/hooks.js";
export type { Plugin, PluginApiMap, PluginContext, RuntimeFacts } from "./loop/plugin.js";
export { UndeclaredCapabilityError } from "./loop/plugin.js";
export { PromptRegistry } from "./loop/prompt.js";
export type { ToolHost } from "./loop/tool-host.js";
export { adapterFor, type OpenAgentOptions, openAgent, SetupError } from "./presets/open-agent.js";
export { standardPlugins } from "./presets/standard.js";
export { FeatureMissingError, StandardAgent } from "./presets/standard-agent.js";
export { openStore } from "./store/open-store.js";
export * from "./store/store.js";
export { type Static, StringEnum, Type, toolParameters } from "./tools/schema.js";
export type { AnyToolDefinition, ToolDefinition, ToolExec, ToolOutput } from "./tools/types.js";
