/**
 * A plugin's minimal environment (Hermes `BaseEnvironment` duck type: `execute` → `{output, exitCode}`
 * and `cleanup`) as a full `TerminalEnvironment`.
 *
 * Invariants:
 * - `spawn` uses the plugin's own streaming `spawn` when it has one; otherwise the command runs through
 *   `execute` and its output arrives when it ends (a background job still works, it just streams late).
 *   A kill aborts the `execute` call's signal.
 * - The extra variables handed to the plugin are filtered by the same `EnvironmentPolicy` as every child,
 *   and the plugin gets `childEnv()` (options) to build a stripped environment for what it spawns.
 * - File operations: the plugin's `files`, else the default built on `execute` (exec-files.ts).
 * - A plugin never runs commands under bubblewrap (`sandboxAvailable()` is false): the sandbox is the
 *   plugin's business, and the runtime context says so.
 */
import type {
  CreateEnvironmentOptions,
  ExecuteOptions,
  ExecuteResult,
  ExitStatus,
  OutputListener,
  ProviderEnvironment,
  ProviderTraits,
  RunningCommand,
  SpawnOptions,
  TerminalEnvironment,
} from "./environment.js";
import { execFiles } from "./exec-files.js";
import { policyFor } from "./policy.js";
import { executeBySpawn, RunningCommands } from "./remote-shell.js";

export function adaptProviderEnvironment(
  made: ProviderEnvironment,
  traits: ProviderTraits,
  options: CreateEnvironmentOptions,
): TerminalEnvironment {
  return new AdaptedEnvironment(made, traits, options);
}

class AdaptedEnvironment implements TerminalEnvironment {
  readonly backend: string;
  readonly files;
  readonly remoteCwd: string | undefined;
  private readonly running = new RunningCommands();

  constructor(
    private readonly inner: ProviderEnvironment,
    readonly traits: ProviderTraits,
    private readonly options: CreateEnvironmentOptions,
  ) {
    this.backend = traits.name;
    const cwd = (inner as { cwd?: unknown }).cwd;
    this.remoteCwd = traits.isRemote ? (typeof cwd === "string" ? cwd : options.cwd) : undefined;
    this.files =
      inner.files ??
      execFiles(async (command, o = {}) => {
        const result = await this.execute(command, {
          cwd: this.remoteCwd ?? options.cwd,
          timeoutMs: o.timeoutMs ?? 60_000,
          ...(o.signal ? { signal: o.signal } : {}),
        });
        return result;
      });
  }

  sandboxAvailable(): boolean {
    return false;
  }

  spawn(command: string, options: SpawnOptions): RunningCommand {
    const env = policyFor(this.options).childEnvironment({}, options.env ?? {});
    const running = this.inner.spawn
      ? this.inner.spawn(command, { ...options, env })
      : new ExecuteCommand(this.inner, command, options.cwd, env);
    this.running.track(running);
    return running;
  }

  execute(command: string, options: ExecuteOptions): Promise<ExecuteResult> {
    return executeBySpawn(this.spawn(command, options), options.timeoutMs, options.signal);
  }

  async cleanup(): Promise<void> {
    await this.running.killAll();
    await this.inner.cleanup?.();
  }
}

/** A command run through the plugin's `execute`: one output chunk at the end, kill = abort. */
class ExecuteCommand implements RunningCommand {
  readonly pid = undefined;
  readonly sandboxed = false;
  readonly exited: Promise<ExitStatus>;
  exitStatus: ExitStatus | undefined;
  private readonly listeners = new Set<OutputListener>();
  private readonly controller = new AbortController();
  private killed = false;

  constructor(inner: ProviderEnvironment, command: string, cwd: string, env: Record<string, string>) {
    this.exited = Promise.resolve()
      .then(() => inner.execute(command, { cwd, env, signal: this.controller.signal, timeout: 2 ** 31 - 1 }))
      .then(
        (result) => {
          const output = typeof result?.output === "string" ? result.output : "";
          if (output !== "") this.emit(Buffer.from(output, "utf8"));
          const code = typeof result?.exitCode === "number" ? result.exitCode : null;
          return this.killed
            ? { exitCode: null, signal: "SIGTERM" as const }
            : { exitCode: code, signal: null };
        },
        (error: unknown) => {
          this.emit(Buffer.from(`${error instanceof Error ? error.message : String(error)}\n`), "stderr");
          return this.killed ? { exitCode: null, signal: "SIGTERM" as const } : { exitCode: 1, signal: null };
        },
      )
      .then((status) => {
        this.exitStatus = status;
        return status;
      });
  }

  onOutput(listener: OutputListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async kill(): Promise<ExitStatus> {
    if (this.exitStatus) return this.exitStatus;
    this.killed = true;
    this.controller.abort();
    return this.exited;
  }

  private emit(chunk: Buffer, stream: "stdout" | "stderr" = "stdout"): void {
    for (const listener of this.listeners) listener(stream, chunk);
  }
}
