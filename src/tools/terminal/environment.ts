/**
 * Terminal environments and their providers (Hermes terminal environment provider plugins, seed 000
 * `terminal-environment-plugin.md`): where model-authored commands run.
 *
 * Invariants:
 * - Every child process gets an environment built by the `EnvironmentPolicy` (child-env.ts): provider keys,
 *   the configured `strip_env_keys` and every registered provider's `stripEnvKeys` are never readable by a
 *   model-authored command, on any backend (a remote one is sent only the T7 variables, never this process's
 *   environment).
 * - `spawn` starts a command in its own process group; `kill()` sends SIGTERM to the group, then SIGKILL
 *   after the grace period (T8, 3 s). `execute` is `spawn` + wait, with `timedOut` when the deadline passed.
 * - A provider is consulted at every classification site through the registry (`traitsOf`), never through a
 *   list of names. A provider attribute that throws counts as its default (Hermes "fail-soft"): a throwing
 *   `skipContainerGuards` keeps the dangerous-command guard on, a throwing `stripEnvKeys` strips nothing
 *   extra (the default patterns still apply), a throwing `isAvailable` is "not available".
 * - The built-in names are reserved; a plugin registering one is rejected with a message naming the rule.
 * - `createEnvironment` receives `{cwd, timeout, taskId, image, containerConfig, ...rest}`; providers must
 *   accept and ignore keys they do not know (forward compatibility).
 * - An environment may carry `files` (read/write/stat/glob/grep). Without it the file tools use this host's
 *   filesystem (local, and docker, whose workspace is bind-mounted at the same path). A plugin environment
 *   without `files` gets the default built on `execute` (exec-files.ts); SSH replaces it with SFTP.
 */
import type { SandboxMode } from "../types.js";
import { policyFor } from "./policy.js";
import { adaptProviderEnvironment } from "./provider-adapter.js";
import type { SandboxNetwork } from "./sandbox-network.js";

export type SandboxSpec = { mode: SandboxMode; workspace: string };

export type SpawnOptions = {
  cwd: string;
  /** Added to the stripped environment (T7's NO_COLOR, TERM, …). */
  env?: Record<string, string>;
  sandbox?: SandboxSpec;
};

export type ExecuteOptions = SpawnOptions & { timeoutMs: number; signal?: AbortSignal };

export type ExitStatus = {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /**
   * Set when the command's outcome is unknown because the backend lost it (an SSH connection
   * dropped mid-command): the text says so, and `exitCode` is null.
   */
  lost?: string;
};

export type ExecuteResult = ExitStatus & {
  stdout: string;
  stderr: string;
  /** Hermes `execute` → `{output, exit_code}`: stdout, then stderr. */
  output: string;
  timedOut: boolean;
};

export type OutputListener = (stream: "stdout" | "stderr", chunk: Buffer) => void;

/** A started command: output listeners, its exit, and the group kill. */
export interface RunningCommand {
  readonly pid: number | undefined;
  /** Whether the command runs inside bubblewrap. */
  readonly sandboxed: boolean;
  onOutput(listener: OutputListener): () => void;
  readonly exited: Promise<ExitStatus>;
  readonly exitStatus: ExitStatus | undefined;
  /** SIGTERM to the process group, SIGKILL after the grace period; resolves when the command exited. */
  kill(): Promise<ExitStatus>;
  /** Process start time (clock ticks since boot, `/proc/<pid>/stat` field 22) for PID-safe adoption. */
  readonly startTicks?: number;
}

export type FileStat = { kind: "file" | "directory" | "other"; size: number; mtimeMs: number };

export type GrepOptions = { glob?: string; ignoreCase?: boolean; signal?: AbortSignal };

/** File operations of an environment: what read, write, edit, glob and grep use remotely. */
export interface EnvironmentFiles {
  stat(path: string): Promise<FileStat | undefined>;
  readFile(path: string): Promise<Buffer>;
  /** Replaces the file atomically (temporary sibling + rename), creating parent directories. */
  writeFile(path: string, content: string): Promise<void>;
  /** Files under `root` whose path relative to it matches `pattern`, as relative paths with mtimes. */
  glob(root: string, pattern: string, signal?: AbortSignal): Promise<{ path: string; mtimeMs: number }[]>;
  /** `path:line:text` lines (absolute paths) for the regular expression under `path`. */
  grep(path: string, pattern: string, options?: GrepOptions): Promise<string[]>;
}

export interface TerminalEnvironment {
  readonly backend: string;
  spawn(command: string, options: SpawnOptions): RunningCommand;
  execute(command: string, options: ExecuteOptions): Promise<ExecuteResult>;
  /** Whether commands under `mode` would be sandboxed here (doctor, T17). */
  sandboxAvailable(): boolean;
  /** A per-session host directory, `$TMPDIR` of every command; the local backend's outlives `cleanup` (session-temp-dir.ts). */
  readonly tempDir?: string;
  /** File operations that do not touch this host (remote backends). */
  readonly files?: EnvironmentFiles;
  /** The environment's own working directory when it is not this host's (remote backends). */
  readonly remoteCwd?: string;
  /** The provider's classification, resolved fail-soft by the registry. */
  readonly traits?: ProviderTraits;
  /**
   * What sandboxed commands (any mode but danger-full-access) may reach on the network, as applied here;
   * absent when the backend does not apply `sandbox_network` (remote and container backends).
   */
  readonly network?: SandboxNetwork;
  cleanup(): Promise<void>;
}

declare module "../types.js" {
  interface ToolServiceMap {
    terminal: TerminalEnvironment;
  }
}

export type EnvironmentFactoryOptions = {
  cwd: string;
  /** Config `terminal.strip_env_keys`: names or globs (child-env.ts). */
  stripEnvKeys: readonly string[];
  /** Config `terminal.pass_env_keys`: names or globs let through the default patterns. */
  passEnvKeys?: readonly string[];
  /** Harness secrets beyond the built-in ones (the `--api-key-env` variable): never passed. */
  harnessEnvKeys?: readonly string[];
  /** Config `sandbox_required` (pending): refuse to run sandboxable commands without bwrap. */
  sandboxRequired?: boolean;
  /** The environment children inherit before stripping; default `process.env`. */
  baseEnv?: NodeJS.ProcessEnv;
  /** `$BDSH_HOME`: masked inside the sandbox. */
  home?: string;
  /** Names the session's temp dir. */
  sessionId?: string;
  /** `sandbox_network` and `sandbox_proxy_allow`: what sandboxed commands may reach (default: nothing). */
  network?: SandboxNetwork;
  /** Trusted project directories: a `.bdsh` of one inside the workspace stays read-only to commands. */
  projectRoots?: readonly string[];
};

/** What `createEnvironment` receives (Hermes: `cwd, timeout, task_id, image, container_config, **kwargs`). */
export type CreateEnvironmentOptions = EnvironmentFactoryOptions & {
  /** Default command deadline, ms. */
  timeout: number;
  /** The sandbox identity: the session id when the sandbox is per session, else `"default"`. */
  taskId: string;
  image?: string;
  /** The backend's own config slice (`terminal.docker`, `terminal.ssh`, …). */
  containerConfig?: Record<string, unknown>;
  /** Config `terminal.container_persistent`. */
  persistent?: boolean;
  /** The session's workspace (what a container bind-mounts). */
  workspace?: string;
  /** This process's environment as a child may see it (stripped), plus `extra`: for what a plugin spawns. */
  childEnv: (extra?: Record<string, string>) => Record<string, string>;
  [key: string]: unknown;
};

/** The least a plugin environment must do (Hermes `BaseEnvironment` duck type). */
export interface ProviderEnvironment {
  execute(
    command: string,
    options: { timeout?: number; signal?: AbortSignal; cwd?: string; env?: Record<string, string> },
  ): Promise<{ output: string; exitCode: number | null }>;
  cleanup?(): void | Promise<void>;
  /** Optional streaming start (background jobs); without it output arrives when the command ends. */
  spawn?(command: string, options: SpawnOptions): RunningCommand;
  files?: EnvironmentFiles;
}

export type ProbeResult = { ok: boolean; detail: string };

export type DoctorCheck = { status: "ok" | "warn" | "fail"; name: string; detail: string };

/** A terminal backend (Hermes `TerminalEnvironmentProvider`). Every attribute but the two names is optional. */
export interface TerminalEnvironmentProvider {
  readonly name: string;
  readonly displayName?: string;
  readonly description?: string;
  /** Commands do not run on this host (runtime context, L13). */
  readonly isRemote?: boolean;
  /** Container path/cwd semantics. */
  readonly isContainer?: boolean;
  /** Where synced cache files land, or null. */
  readonly cachePathBase?: string | null;
  /** Secrets stripped from every child process, whatever backend is selected. */
  readonly stripEnvKeys?: readonly string[];
  /** The dangerous-command approval is skipped (the sandbox is the guard). A throw keeps it on. */
  readonly skipContainerGuards?: boolean;
  /** With `container_persistent: false`, each session gets its own sandbox identity. */
  readonly sessionIsolatedWhenNonpersistent?: boolean;
  /** One line for the model's runtime context (L13). */
  readonly envDescription?: string;
  /** Cheap, no network. */
  isAvailable?(): boolean;
  /** Cheap, no network: a status for `bdsh backends list`. */
  probe?(): ProbeResult;
  doctorChecks?(): DoctorCheck[];
  setupInstructions?(): string;
  createEnvironment(options: CreateEnvironmentOptions): TerminalEnvironment | ProviderEnvironment;
}

/** Kept for backend plugins written against the first interface: `create` instead of `createEnvironment`. */
export type TerminalBackend = TerminalEnvironmentProvider;

export type ProviderTraits = {
  name: string;
  displayName: string;
  description: string;
  isRemote: boolean;
  isContainer: boolean;
  cachePathBase: string | null;
  stripEnvKeys: string[];
  skipContainerGuards: boolean;
  sessionIsolatedWhenNonpersistent: boolean;
  envDescription: string | undefined;
};

/** Hermes's in-tree backend names: plugins extend the set, never shadow these. */
export const RESERVED_BACKENDS = [
  "local",
  "ssh",
  "docker",
  "singularity",
  "modal",
  "managed_modal",
  "daytona",
  "vercel_sandbox",
] as const;

export class ReservedBackendError extends Error {
  constructor(name: string) {
    super(
      `terminal backend name "${name}" is reserved for a built-in backend (${RESERVED_BACKENDS.join(", ")}); a plugin must register a name of its own`,
    );
    this.name = "ReservedBackendError";
  }
}

/** The attribute, or `fallback` when reading it throws or gives the wrong type (Hermes fail-soft). */
export function attribute<T>(read: () => unknown, fallback: T, valid: (value: unknown) => boolean): T {
  try {
    const value = read();
    return valid(value) ? (value as T) : fallback;
  } catch {
    return fallback;
  }
}

const isBool = (v: unknown) => typeof v === "boolean";
const isString = (v: unknown) => typeof v === "string";

/** Every classification a core site needs, read once, fail-soft. */
export function traitsOf(provider: TerminalEnvironmentProvider): ProviderTraits {
  const name = provider.name;
  return {
    name,
    displayName: attribute(() => provider.displayName, name, isString),
    description: attribute(() => provider.description, "", isString),
    isRemote: attribute(() => provider.isRemote, false, isBool),
    isContainer: attribute(() => provider.isContainer, false, isBool),
    cachePathBase: attribute(
      () => provider.cachePathBase,
      null,
      (v) => v === null || typeof v === "string",
    ),
    stripEnvKeys: attribute(
      () => [...(provider.stripEnvKeys ?? [])],
      [] as string[],
      (v) => Array.isArray(v) && v.every(isString),
    ),
    skipContainerGuards: attribute(() => provider.skipContainerGuards, false, isBool),
    sessionIsolatedWhenNonpersistent: attribute(
      () => provider.sessionIsolatedWhenNonpersistent,
      false,
      isBool,
    ),
    envDescription: attribute(
      () => provider.envDescription,
      undefined,
      (v) => v === undefined || typeof v === "string",
    ),
  };
}

export function providerAvailable(provider: TerminalEnvironmentProvider): boolean {
  return attribute(() => (provider.isAvailable ? provider.isAvailable() : true), false, isBool);
}

export function providerProbe(provider: TerminalEnvironmentProvider): ProbeResult {
  const fallback = providerAvailable(provider)
    ? { ok: true, detail: "available" }
    : { ok: false, detail: "not available" };
  return attribute(
    () => (provider.probe ? provider.probe() : fallback),
    { ok: false, detail: "probe failed" },
    (v) => typeof v === "object" && v !== null && isBool((v as ProbeResult).ok),
  );
}

export type ProviderListing = ProviderTraits & {
  builtin: boolean;
  available: boolean;
  probe: ProbeResult;
  setup: string | undefined;
};

/** Options the tools plugin passes to `create`, beyond the factory options. */
export type CreateSelection = EnvironmentFactoryOptions & {
  timeout?: number;
  workspace?: string;
  persistent?: boolean;
  image?: string;
  containerConfig?: Record<string, unknown>;
};

export class TerminalBackendRegistry {
  private readonly backends = new Map<string, { provider: TerminalEnvironmentProvider; builtin: boolean }>();

  /** `builtin` registrations may use reserved names; plugin ones may not. */
  register(backend: TerminalEnvironmentProvider, options: { builtin?: boolean } = {}): void {
    const name = attribute(() => backend.name, "", isString);
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
      throw new Error(`terminal backend name "${name}" is not a valid name`);
    const reserved = (RESERVED_BACKENDS as readonly string[]).includes(name);
    if (reserved && !options.builtin) throw new ReservedBackendError(name);
    if (this.backends.has(name)) throw new Error(`terminal backend "${name}" is already registered`);
    if (typeof backend.createEnvironment !== "function") {
      const legacy = (backend as { create?: unknown }).create;
      if (typeof legacy !== "function")
        throw new Error(`terminal backend "${name}" has no createEnvironment(options)`);
    }
    this.backends.set(name, { provider: backend, builtin: options.builtin ?? false });
  }

  get(name: string): TerminalEnvironmentProvider | undefined {
    return this.backends.get(name)?.provider;
  }

  names(): string[] {
    return [...this.backends.keys()];
  }

  traits(name: string): ProviderTraits | undefined {
    const provider = this.get(name);
    return provider ? traitsOf(provider) : undefined;
  }

  /** `bdsh backends list` and doctor: every provider, fail-soft. */
  list(): ProviderListing[] {
    return [...this.backends.values()].map(({ provider, builtin }) => ({
      ...traitsOf(provider),
      builtin,
      available: providerAvailable(provider),
      probe: providerProbe(provider),
      setup: attribute(
        () => provider.setupInstructions?.(),
        undefined,
        (v) => v === undefined || isString(v),
      ),
    }));
  }

  doctorChecks(name: string): DoctorCheck[] {
    const provider = this.get(name);
    if (!provider) return [];
    return attribute(
      () => provider.doctorChecks?.() ?? [],
      [{ status: "warn", name: `backend ${name}`, detail: "its doctor checks failed to run" }],
      Array.isArray,
    );
  }

  /** Keys every backend asks to strip; a backend whose attribute throws contributes nothing (fail-soft). */
  stripKeys(): string[] {
    return [...this.backends.values()].flatMap(({ provider }) => traitsOf(provider).stripEnvKeys);
  }

  create(name: string, options: CreateSelection): TerminalEnvironment {
    const provider = this.get(name);
    if (!provider) throw new Error(`unknown terminal backend "${name}"; known: ${this.names().join(", ")}`);
    const traits = traitsOf(provider);
    const persistent = options.persistent ?? true;
    const stripEnvKeys = [...options.stripEnvKeys, ...this.stripKeys()];
    const createOptions: CreateEnvironmentOptions = {
      ...options,
      stripEnvKeys,
      timeout: options.timeout ?? 60_000,
      // Hermes session isolation: a sandbox resumed by name gets one identity per session when it is not
      // persistent, so two ephemeral runs never attach (and delete) one live sandbox.
      taskId:
        !persistent && traits.sessionIsolatedWhenNonpersistent && options.sessionId
          ? options.sessionId
          : "default",
      persistent,
      childEnv: (extra = {}) =>
        policyFor({ ...options, stripEnvKeys }).childEnvironment(options.baseEnv ?? process.env, extra),
    };
    const legacy = (provider as { create?: (o: CreateEnvironmentOptions) => unknown }).create;
    const made =
      typeof provider.createEnvironment === "function"
        ? provider.createEnvironment(createOptions)
        : (legacy!.call(provider, createOptions) as TerminalEnvironment | ProviderEnvironment);
    return withTraits(made, traits, createOptions);
  }
}

/** Alias under the Hermes name. */
export { TerminalBackendRegistry as TerminalProviderRegistry };

function isFull(environment: TerminalEnvironment | ProviderEnvironment): environment is TerminalEnvironment {
  return (
    typeof (environment as TerminalEnvironment).spawn === "function" &&
    typeof (environment as TerminalEnvironment).sandboxAvailable === "function"
  );
}

/** The environment with its provider's traits; a plugin's minimal environment adapted to the full one. */
function withTraits(
  made: TerminalEnvironment | ProviderEnvironment,
  traits: ProviderTraits,
  options: CreateEnvironmentOptions,
): TerminalEnvironment {
  if (isFull(made)) {
    Object.defineProperty(made, "traits", { value: traits, configurable: true });
    return made;
  }
  return adaptProviderEnvironment(made, traits, options);
}
