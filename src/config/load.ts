/**
 * Loads the configuration from its sources and merges them (INTERFACE.md "Precedence"):
 * flags, then environment, then `--config`/`BDSH_CONFIG`, then `./.bdsh/config.yaml`, then
 * `$BDSH_HOME/config.yaml`, then defaults.
 *
 * Each source is checked on its own before merging, so an error names the key and the source it came from
 * (a file path, an environment variable or a flag). Nothing here reads or holds a secret: provider keys
 * stay in the environment and are resolved by the model layer per request.
 *
 * The project's file (`./.bdsh/config.yaml`) is read only when the workspace is trusted (./trust.ts), and
 * even then it cannot loosen a security key (./security-keys.ts): what it may not set is dropped with a
 * warning, never obeyed.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseDocument } from "yaml";
import type { z } from "zod";
import { type Config, type ConfigLayer, configSchema, DEFAULT_CONFIG, layerSchema } from "./schema.js";
import { restrictProjectLayer, valueAt } from "./security-keys.js";
import { trustedRoot } from "./trust.js";

export class ConfigError extends Error {
  readonly code = "CONFIG";
  constructor(
    /** Dotted key, e.g. `model.effort`; empty when the whole source is unreadable. */
    readonly key: string,
    /** Where the bad value came from: a file path, `environment variable X` or `flag --x`. */
    readonly source: string,
    readonly detail: string,
  ) {
    super(key ? `${source}: ${key}: ${detail}` : `${source}: ${detail}`);
    this.name = "ConfigError";
  }
}

/** Environment variables that set a config key (INTERFACE.md "Options shared by run, chat and resume"). */
export const ENV_KEYS = {
  BDSH_PROVIDER: "model.provider",
  BDSH_BASE_URL: "model.base_url",
  BDSH_MODEL: "model.id",
  BDSH_EFFORT: "model.effort",
  BDSH_SANDBOX: "sandbox",
  BDSH_APPROVAL: "approval",
  BDSH_SANDBOX_NETWORK: "sandbox_network",
  BDSH_LOG_LEVEL: "server.log_level",
} as const;

/** Flags that set a config key, by flag name. */
export const FLAG_KEYS = {
  provider: "model.provider",
  "base-url": "model.base_url",
  model: "model.id",
  effort: "model.effort",
  sandbox: "sandbox",
  approval: "approval",
  "sandbox-network": "sandbox_network",
} as const;

export type ConfigFlags = Partial<Record<keyof typeof FLAG_KEYS, string>>;

export type LoadConfigOptions = {
  home: string;
  /** The workspace: `./.bdsh/config.yaml` is looked up here. */
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** `--config FILE`; overrides `BDSH_CONFIG`. */
  configFile?: string;
  flags?: ConfigFlags;
  /** Whether the workspace is trusted; default: looked up in `$BDSH_HOME/trusted.json`. */
  trusted?: boolean;
};

export type ProjectTrust = {
  /** The workspace whose `./.bdsh/` and instruction files are the project's. */
  dir: string;
  /**
   * The directory whose `.bdsh/` is the project's: the trusted directory covering `dir` (itself or an
   * ancestor), else `dir`. A `.bdsh/` below it is never read.
   */
  root: string;
  trusted: boolean;
  /** `<root>/.bdsh/config.yaml` when it exists (read only when trusted). */
  configFile?: string;
};

export type LoadedConfig = {
  config: Config;
  /** Config files that were found and read, in the order applied. */
  files: string[];
  project: ProjectTrust;
  /** Things the user should know that are not errors: an untrusted project, a key a project may not set. */
  warnings: string[];
};

export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const env = options.env ?? process.env;
  const files: string[] = [];
  const warnings: string[] = [];
  let merged: unknown = structuredClone(DEFAULT_CONFIG);
  // The project's `.bdsh/` is the trusted root's: a subdirectory's is one the model could have written.
  const root = options.trusted === undefined ? trustedRoot(options.home, options.cwd) : undefined;
  const projectRoot = root ?? resolve(options.cwd);
  const projectFile = join(projectRoot, ".bdsh", "config.yaml");
  const project: ProjectTrust = {
    dir: resolve(options.cwd),
    root: projectRoot,
    trusted: options.trusted ?? root !== undefined,
    ...(existsSync(projectFile) ? { configFile: projectFile } : {}),
  };

  const candidates: Array<{ path: string; required: boolean; project?: boolean }> = [
    { path: join(options.home, "config.yaml"), required: false },
    { path: projectFile, required: false, project: true },
  ];
  const extra = options.configFile ?? env.BDSH_CONFIG;
  if (extra) candidates.push({ path: resolve(options.cwd, extra), required: true });

  for (const { path, required, project: fromProject } of candidates) {
    if (!existsSync(path)) {
      if (required) throw new ConfigError("", path, "config file not found");
      continue;
    }
    if (fromProject && !project.trusted) {
      warnings.push(`${path} was not read: ${project.dir} is not trusted (run \`bdsh trust\` to trust it)`);
      continue;
    }
    let layer = checkLayer(readYamlFile(path), path);
    if (fromProject) {
      const restricted = restrictProjectLayer(layer as Record<string, unknown>, merged);
      for (const key of restricted.dropped)
        warnings.push(`${path}: ${key}: ignored; a project's config cannot loosen a security key`);
      layer = restricted.layer as ConfigLayer;
    }
    merged = mergeLayer(merged, layer);
    files.push(path);
  }

  for (const [variable, key] of Object.entries(ENV_KEYS)) {
    const value = env[variable];
    if (value === undefined || value === "") continue;
    merged = mergeLayer(merged, checkLayer(layerFor(key, value), `environment variable ${variable}`));
  }
  for (const [flag, key] of Object.entries(FLAG_KEYS)) {
    const value = options.flags?.[flag as keyof ConfigFlags];
    if (value === undefined) continue;
    merged = mergeLayer(merged, checkLayer(layerFor(key, value), `flag --${flag}`));
  }

  const result = configSchema.safeParse(merged);
  if (!result.success) {
    const [key, detail] = describeIssue(result.error.issues[0]!, merged);
    throw new ConfigError(key, files.at(-1) ?? "configuration", detail);
  }
  return { config: result.data, files, project, warnings };
}

function readYamlFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError("", path, `cannot read: ${(error as Error).message}`);
  }
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const first = document.errors[0];
  if (first) throw new ConfigError("", path, `invalid YAML: ${first.message.split("\n")[0]}`);
  const value = document.toJS() as unknown;
  return value ?? {};
}

function checkLayer(layer: unknown, source: string): ConfigLayer {
  const result = layerSchema.safeParse(layer);
  if (result.success) return result.data as ConfigLayer;
  const [key, detail] = describeIssue(result.error.issues[0]!, layer);
  throw new ConfigError(key, source, detail);
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown): [string, string] {
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys") {
    const key = [...path, issue.keys[0]!].join(".");
    return [key, "unknown key"];
  }
  const key = path.join(".") || "(top level)";
  const got = valueAt(input, path);
  // An MCP server's entry may hold literal secrets (its `env`, its `headers`): never quoted back.
  const secret = path[0] === "mcp_servers";
  const shown = got === undefined ? "nothing" : secret ? "a value that is not shown" : JSON.stringify(got);
  if (issue.code === "invalid_value") {
    return [key, `expected one of ${issue.values.map(String).join("|")}, got ${shown}`];
  }
  if (issue.code === "invalid_type") return [key, `expected ${issue.expected}, got ${shown}`];
  return [key, `${issue.message.replace(/^Invalid input: /, "")} (got ${shown})`];
}

function layerFor(dottedKey: string, value: unknown): Record<string, unknown> {
  const parts = dottedKey.split(".");
  let layer: unknown = value;
  for (let i = parts.length - 1; i >= 0; i--) layer = { [parts[i]!]: layer };
  return layer as Record<string, unknown>;
}

/** Objects merge key by key; arrays and scalars replace. */
function mergeLayer(base: unknown, layer: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(layer)) return layer === undefined ? base : layer;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(layer)) out[key] = mergeLayer(base[key], value);
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
