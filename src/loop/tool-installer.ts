/**
 * Adds planning tools (goal, plan mode, schedules, ralph) to an agent.
 *
 * With the standard tools plugin, they are registered on its `toolRegistry` (one namespace, shadowing
 * checked) and the plugin offers them with the rest once every plugin is set up (`agent/ready`). Without
 * it (tests with a small host), a registry and pipeline of their own serve them, appended after the
 * existing host's declarations so the earlier prefix is unchanged.
 */

import { ToolPipeline } from "../tools/pipeline.js";
import { ToolRegistry } from "../tools/registry.js";
import type { AnyToolDefinition } from "../tools/types.js";
import type { PluginContext } from "./plugin.js";
import type { ToolHost } from "./tool-host.js";

export function installTools(ctx: PluginContext, tools: readonly AnyToolDefinition[], base?: ToolHost): void {
  const shared = ctx.services.get("toolRegistry");
  if (shared) {
    for (const tool of tools) shared.register(tool, { source: "planning" });
    return;
  }
  const registry = new ToolRegistry();
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
    isReadOnly: (call) =>
      names.has(call.name) ? pipeline.isReadOnly(call) : (previous?.isReadOnly?.(call) ?? false),
    run: (call, exec) =>
      names.has(call.name) || !previous ? pipeline.run(call, exec) : previous.run(call, exec),
  });
}
