/**
 * Terminal environments (Hermes terminal environment providers): where model-authored commands run.
 *
 * Invariants:
 * - Every child process gets an environment built by `childEnvironment` (child-env.ts): provider keys and the
 *   configured `strip_env_keys` are never readable by a model-authored command.
 * - `spawn` starts a command in its own process group; `kill()` sends SIGTERM to the group, then SIGKILL
 *   after the grace period (T8, 3 s). `execute` is `spawn` + wait, with `timedOut` when the deadline passed.
 * - Backends register by name; the built-in names are reserved and a plugin cannot take them.
 */
import type { SandboxMode } from "../types.js";

export type SandboxSpec = { mode: SandboxMode; workspace: string };

export type SpawnOptions = {
  cwd: string;
  /** Added to the stripped environment (T7's NO_COLOR, TERM, …). */
  env?: Record<string, string>;
  sandbox?: SandboxSpec;
};

export type ExecuteOptions = SpawnOptions & { timeoutMs: number; signal?: AbortSignal };

export type ExitStatus = { exitCode: number | null; signal: NodeJS.Signals | null };

export type ExecuteResult = ExitStatus & { stdout: string; stderr: string; timedOut: boolean };

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
}

export interface TerminalEnvironment {
  readonly backend: string;
  spawn(command: string, options: SpawnOptions): RunningCommand;
  execute(command: string, options: ExecuteOptions): Promise<ExecuteResult>;
  /** Whether commands under `mode` would be sandboxed here (doctor, T17). */
  sandboxAvailable(): boolean;
  /** Issue 14 finding 5: a per-session host directory, `$TMPDIR` of every command, removed by `cleanup`. */
  readonly tempDir?: string;
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
  /** Config `terminal.pass_env_keys`: names or globs let through the default patterns (issue 14). */
  passEnvKeys?: readonly string[];
  /** Harness secrets beyond the built-in ones (the `--api-key-env` variable): never passed. */
  harnessEnvKeys?: readonly string[];
  /** Config `sandbox_required` (pending): refuse to run sandboxable commands without bwrap. */
  sandboxRequired?: boolean;
  /** The environment children inherit before stripping; default `process.env`. */
  baseEnv?: NodeJS.ProcessEnv;
  /** `$BDSH_HOME`: masked inside the sandbox (issue 14 finding 3). */
  home?: string;
  /** Names the session's temp dir. */
  sessionId?: string;
};

export type TerminalBackend = {
  name: string;
  description: string;
  isAvailable?(): boolean;
  /** Provider-specific secrets stripped from every child (Hermes `strip_env_keys`). */
  stripEnvKeys?: readonly string[];
  create(options: EnvironmentFactoryOptions): TerminalEnvironment;
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

export class TerminalBackendRegistry {
  private readonly backends = new Map<string, TerminalBackend>();

  /** `builtin` registrations may use reserved names; plugin ones may not. */
  register(backend: TerminalBackend, options: { builtin?: boolean } = {}): void {
    const reserved = (RESERVED_BACKENDS as readonly string[]).includes(backend.name);
    if (reserved && !options.builtin) {
      throw new Error(`terminal backend name "${backend.name}" is reserved`);
    }
    if (this.backends.has(backend.name)) {
      throw new Error(`terminal backend "${backend.name}" is already registered`);
    }
    this.backends.set(backend.name, backend);
  }

  get(name: string): TerminalBackend | undefined {
    return this.backends.get(name);
  }

  names(): string[] {
    return [...this.backends.keys()];
  }

  /** Keys every backend asks to strip; a backend whose attribute throws contributes nothing (fail-soft). */
  stripKeys(): string[] {
    const keys: string[] = [];
    for (const backend of this.backends.values()) {
      try {
        keys.push(...(backend.stripEnvKeys ?? []));
      } catch {
        // Hermes fail-soft: a raising attribute is treated as its default.
      }
    }
    return keys;
  }

  create(name: string, options: EnvironmentFactoryOptions): TerminalEnvironment {
    const backend = this.backends.get(name);
    if (!backend) throw new Error(`unknown terminal backend "${name}"; known: ${this.names().join(", ")}`);
    return backend.create({ ...options, stripEnvKeys: [...options.stripEnvKeys, ...this.stripKeys()] });
  }
}
