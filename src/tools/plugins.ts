/**
 * Plugin tools (Hermes plugins): ES modules in `$BDSH_HOME/plugins` and `./.bdsh/plugins` exporting
 * `register(ctx)`. A plugin is a `.js`/`.mjs` file, or a directory with `index.js`/`index.mjs`.
 *
 * Invariants:
 * - A broken plugin (import error, no `register`, a throw, a rejected registration) is reported and skipped,
 *   never fatal; nothing it registered before failing is kept (registrations are staged, then committed).
 * - A plugin may replace an existing tool only when its name is in `allowToolOverride` (config opt-in, as
 *   Hermes's `allow_tool_override`); plugin terminal backends may not take reserved names, and only a
 *   plugin under `backendDirectory` (`$BDSH_HOME/plugins`) may register one.
 * - Directories load in the order given, files in name order, so the tool order is stable.
 */
import { stat } from "node:fs/promises";
import { basename, extname, isAbsolute, join, relative, sep } from "node:path";
import { pathToFileURL } from "node:url";
import type { HookBus } from "../hooks/hook-bus.js";
import { listDirectory } from "./directory-listing.js";
import type { ToolRegistry } from "./registry.js";
import { isBackendPluginDirectory } from "./terminal/backend-plugins.js";
import type { TerminalBackend, TerminalBackendRegistry } from "./terminal/environment.js";
import type { AnyToolDefinition } from "./types.js";

/** What a Hermes-style plugin module's `register(ctx)` gets (not the loop's `PluginContext`, which plugins on hooks get). */
export type ToolPluginContext = {
  name: string;
  hooks: HookBus;
  registerTool(tool: AnyToolDefinition, options?: { toolset?: string; allowShadow?: boolean }): void;
  defineToolset(name: string, members: readonly string[]): void;
  registerTerminalBackend(backend: TerminalBackend): void;
};

export type PluginReport = {
  loaded: { name: string; path: string; tools: string[] }[];
  failed: { name: string; path: string; error: string }[];
};

export type LoadPluginsOptions = {
  directories: readonly string[];
  registry: ToolRegistry;
  hooks: HookBus;
  backends?: TerminalBackendRegistry;
  /**
   * The one directory whose plugins may register terminal backends (`$BDSH_HOME/plugins`). A
   * backend runs every command outside the sandbox, so a project's plugin (which the model may have
   * written into a workspace later trusted) never registers one. Unset: no plugin may.
   */
  backendDirectory?: string;
  allowToolOverride?: readonly string[];
};

export async function loadPlugins(options: LoadPluginsOptions): Promise<PluginReport> {
  const report: PluginReport = { loaded: [], failed: [] };
  for (const directory of options.directories) {
    for (const { name, path } of await discover(directory)) {
      try {
        const tools = await loadOne(name, path, options);
        report.loaded.push({ name, path, tools });
      } catch (error) {
        report.failed.push({ name, path, error: error instanceof Error ? error.message : String(error) });
      }
    }
  }
  return report;
}

async function discover(directory: string): Promise<{ name: string; path: string }[]> {
  const entries = [...(await listDirectory(directory))];
  const found: { name: string; path: string }[] = [];
  for (const entry of entries.sort()) {
    const path = join(directory, entry);
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile() && [".js", ".mjs"].includes(extname(entry))) {
      found.push({ name: basename(entry, extname(entry)), path });
    } else if (info?.isDirectory()) {
      // A backend plugin (plugin.yaml `kind: backend`) is loaded by terminal/backend-plugins.ts.
      if (await isBackendPluginDirectory(path)) continue;
      for (const index of ["index.mjs", "index.js"]) {
        if (
          await stat(join(path, index)).then(
            (s) => s.isFile(),
            () => false,
          )
        ) {
          found.push({ name: entry, path: join(path, index) });
          break;
        }
      }
    }
  }
  return found;
}

type Staged = {
  tools: { tool: AnyToolDefinition; toolset: string | undefined; allowShadow: boolean }[];
  toolsets: { name: string; members: readonly string[] }[];
  backends: TerminalBackend[];
};

async function loadOne(name: string, path: string, options: LoadPluginsOptions): Promise<string[]> {
  const module: unknown = await import(pathToFileURL(path).href);
  const register = (module as { register?: unknown }).register;
  if (typeof register !== "function") throw new Error("the module does not export register(ctx)");
  const staged: Staged = { tools: [], toolsets: [], backends: [] };
  const context: ToolPluginContext = {
    name,
    hooks: options.hooks,
    registerTool: (tool, toolOptions = {}) =>
      staged.tools.push({
        tool,
        toolset: toolOptions.toolset,
        allowShadow: toolOptions.allowShadow ?? false,
      }),
    defineToolset: (toolset, members) => staged.toolsets.push({ name: toolset, members }),
    registerTerminalBackend: (backend) => staged.backends.push(backend),
  };
  await register(context);
  const mayOverride = options.allowToolOverride?.includes(name) ?? false;
  for (const { tool, allowShadow } of staged.tools) {
    if (options.registry.has(tool.name) && !(allowShadow && mayOverride)) {
      throw new Error(
        `tool "${tool.name}" is already registered; overriding it needs allow_tool_override for "${name}"`,
      );
    }
  }
  const registered: string[] = [];
  try {
    for (const { tool, toolset, allowShadow } of staged.tools) {
      options.registry.register(tool, {
        ...(toolset ? { toolset } : {}),
        allowShadow: allowShadow && mayOverride,
        source: path,
      });
      registered.push(tool.name);
    }
    for (const toolset of staged.toolsets) options.registry.defineComposite(toolset.name, toolset.members);
    for (const backend of staged.backends) {
      if (!options.backends) throw new Error("terminal backends cannot be registered here");
      if (!options.backendDirectory || !isInside(options.backendDirectory, path))
        throw new Error(
          `terminal backend "${backend.name}": only plugins in $BDSH_HOME/plugins may register terminal backends`,
        );
      options.backends.register(backend);
    }
  } catch (error) {
    for (const tool of registered) options.registry.unregister(tool);
    throw error;
  }
  return registered;
}

function isInside(root: string, path: string): boolean {
  const inside = relative(root, path);
  return inside !== "" && inside.split(sep)[0] !== ".." && !isAbsolute(inside);
}
