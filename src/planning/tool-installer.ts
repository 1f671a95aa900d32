/**
 * Adds planning tools (goal, plan mode, schedules, ralph) to an agent whose tool host is already set.
 *
 * The tools plugin (presets/standard-tools.ts) fixes its declarations at setup, before later plugins run, so
 * registering on its `toolRegistry` afterwards would not reach the model. Instead the tools are registered
 * there (one namespace, shadowing checked) and served by a second pipeline on the same hooks; the agent's
 * `toolHost` becomes the previous host plus these declarations, appended so the earlier prefix is unchanged.
 * Without a tools plugin (tests with a small host) a registry of their own is used.
 */
import type { PluginContext } from "../loop/plugin.js";
import type { ToolHost } from "../loop/tool-host.js";
import { ToolPipeline } from "../tools/pipeline.js";
import { ToolRegistry } from "../tools/registry.js";
import type { AnyToolDefinition } from "../tools/types.js";

export function installTools(ctx: PluginContext, tools: readonly AnyToolDefinition[], base?: ToolHost): void {
  const registry = ctx.services.get("toolRegistry") ?? new ToolRegistry();
  const previous = base ?? ctx.services.get("toolHost");
  const names = new Set(tools.map((tool) => tool.name));
  for (const tool of tools) registry.register(tool, { source: "planning" });
  for (const tool of tools) {
    if (tool.promptSection)
      ctx.prompt.addSection({ name: `tool:${tool.name}`, ...tool.promptSection, visibleWith: tool.name });
  }
  const pipeline = new ToolPipeline({ registry, hooks: ctx.hooks, visible: () => names });
  const own = registry.declarations(names);
  ctx.services.set("toolHost", {
    declarations: () => [...(previous?.declarations() ?? []), ...own],
    concurrencyOf: (call) =>
      names.has(call.name) ? pipeline.concurrencyOf(call) : (previous?.concurrencyOf(call) ?? "exclusive"),
    run: (call, exec) =>
      names.has(call.name) || !previous ? pipeline.run(call, exec) : previous.run(call, exec),
  });
}
