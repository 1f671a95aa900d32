/**
 * Backend plugins (Hermes terminal environment provider plugins, seed 000): a directory
 * `$BDSH_HOME/plugins/<name>/` with a `plugin.yaml` (`name`, `version`, `description`, `kind: backend`) and
 * an ES module (`index.mjs` or `index.js`) exporting `register(ctx)`, which calls
 * `ctx.registerTerminalEnvironmentProvider(provider)`.
 *
 * Invariants:
 * - Only `$BDSH_HOME/plugins` is searched, never the workspace's `.bdsh/plugins`, and not even that when
 *   `$BDSH_HOME` lies inside the workspace: a backend runs outside every sandbox, so the model (which can
 *   write the workspace) must never be able to write one that gets loaded (SECURITY.md).
 * - A reserved name (`local`, `ssh`, `docker`, …) is rejected with the rule in the message; so is a
 *   manifest whose `name` is not its directory's, or that lacks a field.
 * - A broken plugin is reported and skipped, never fatal; its registrations are staged and committed only
 *   when `register` returned, so nothing of a failed plugin stays registered.
 * - Directories load in name order.
 */
import { readFile, realpath, stat } from "node:fs/promises";
import { isAbsolute, join, relative, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { parse } from "yaml";
import { listDirectory } from "../directory-listing.js";
import {
  RESERVED_BACKENDS,
  ReservedBackendError,
  type TerminalBackendRegistry,
  type TerminalEnvironmentProvider,
} from "./environment.js";

export type BackendPluginManifest = { name: string; version: string; description: string; kind: string };

export type BackendPluginContext = {
  name: string;
  registerTerminalEnvironmentProvider(provider: TerminalEnvironmentProvider): void;
};

export type BackendPluginReport = {
  loaded: { name: string; path: string; backends: string[] }[];
  failed: { name: string; path: string; error: string }[];
};

/** The manifest of a plugin directory, or undefined when it has no `plugin.yaml`; throws when malformed. */
export async function readManifest(directory: string): Promise<BackendPluginManifest | undefined> {
  const text = await readFile(join(directory, "plugin.yaml"), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const data = parse(text) as Record<string, unknown> | null;
  if (!data || typeof data !== "object") throw new Error("plugin.yaml is not a mapping");
  for (const key of ["name", "version", "description", "kind"]) {
    if (typeof data[key] !== "string" && typeof data[key] !== "number")
      throw new Error(`plugin.yaml: "${key}" is missing`);
  }
  return {
    name: String(data.name),
    version: String(data.version),
    description: String(data.description),
    kind: String(data.kind),
  };
}

/** Whether `directory` holds a backend plugin (the tool-plugin loader leaves those to this one). */
export async function isBackendPluginDirectory(directory: string): Promise<boolean> {
  try {
    return (await readManifest(directory))?.kind === "backend";
  } catch {
    return false;
  }
}

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel === "" || (rel.split(sep)[0] !== ".." && !isAbsolute(rel));
};

export async function loadBackendPlugins(options: {
  home: string;
  /** The session's workspace: a `$BDSH_HOME` inside it loads no backend plugin. */
  workspace: string;
  registry: TerminalBackendRegistry;
}): Promise<BackendPluginReport> {
  const report: BackendPluginReport = { loaded: [], failed: [] };
  const root = join(options.home, "plugins");
  const entries = [...(await listDirectory(root))];
  if (entries.length === 0) return report;
  const realRoot = await realpath(root).catch(() => root);
  const realWorkspace = await realpath(options.workspace).catch(() => options.workspace);
  const writableByModel = inside(realWorkspace, realRoot);
  for (const entry of entries.sort()) {
    const directory = join(root, entry);
    if (!(await stat(directory).catch(() => undefined))?.isDirectory()) continue;
    let manifest: BackendPluginManifest | undefined;
    try {
      manifest = await readManifest(directory);
    } catch (error) {
      report.failed.push({ name: entry, path: directory, error: (error as Error).message });
      continue;
    }
    if (manifest?.kind !== "backend") continue;
    try {
      if (writableByModel)
        throw new Error(
          `$BDSH_HOME (${options.home}) is inside the workspace, which the model can write: backend plugins are not loaded from it`,
        );
      const backends = await loadOne(entry, directory, manifest, options.registry);
      report.loaded.push({ name: entry, path: directory, backends });
    } catch (error) {
      report.failed.push({
        name: entry,
        path: directory,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return report;
}

async function loadOne(
  entry: string,
  directory: string,
  manifest: BackendPluginManifest,
  registry: TerminalBackendRegistry,
): Promise<string[]> {
  if (manifest.name !== entry)
    throw new Error(`plugin.yaml names "${manifest.name}", but the directory is "${entry}"`);
  let module: string | undefined;
  for (const index of ["index.mjs", "index.js"]) {
    if ((await stat(join(directory, index)).catch(() => undefined))?.isFile()) {
      module = join(directory, index);
      break;
    }
  }
  if (!module) throw new Error("no index.mjs or index.js next to plugin.yaml");
  const loaded: unknown = await import(pathToFileURL(module).href);
  const register = (loaded as { register?: unknown }).register;
  if (typeof register !== "function") throw new Error("the module does not export register(ctx)");
  const staged: TerminalEnvironmentProvider[] = [];
  const context: BackendPluginContext = {
    name: entry,
    registerTerminalEnvironmentProvider: (provider) => {
      // Rejected at once, so the plugin's own code sees the error too.
      if ((RESERVED_BACKENDS as readonly string[]).includes(provider?.name)) {
        throw new ReservedBackendError(provider.name);
      }
      staged.push(provider);
    },
  };
  await register(context);
  if (staged.length === 0) throw new Error("register(ctx) registered no terminal environment provider");
  const names: string[] = [];
  for (const provider of staged) {
    registry.register(provider);
    names.push(provider.name);
  }
  return names;
}
