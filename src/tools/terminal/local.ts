/**
 * The `local` terminal backend: `bash -c` on this machine, under bubblewrap when the sandbox mode asks for
 * it and `bwrap` works (T17).
 *
 * Invariants:
 * - The child is the leader of a new process group (`detached`), so a kill reaches everything it started.
 * - Kill is SIGTERM to the group, then SIGKILL after `graceMs` (T8: 3 s); it resolves on exit.
 * - With `sandboxRequired`, a sandboxed mode without bwrap refuses to spawn instead of running unsandboxed.
 * - The environment is always `childEnvironment(...)`: secrets stripped (issue 5 item 3).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { bubblewrapArgs, bubblewrapAvailable } from "./bubblewrap.js";
import { childEnvironment } from "./child-env.js";
import type {
  EnvironmentFactoryOptions,
  ExecuteOptions,
  ExecuteResult,
  ExitStatus,
  OutputListener,
  RunningCommand,
  SpawnOptions,
  TerminalBackend,
  TerminalEnvironment,
} from "./environment.js";

export const KILL_GRACE_MS = 3_000;

export class SandboxUnavailableError extends Error {
  constructor() {
    super("sandbox_required is set, but bubblewrap (bwrap) is not available; the command was not run");
    this.name = "SandboxUnavailableError";
  }
}

export class LocalEnvironment implements TerminalEnvironment {
  readonly backend = "local";
  private readonly running = new Set<RunningCommand>();

  constructor(
    private readonly options: EnvironmentFactoryOptions & { graceMs?: number; useBubblewrap?: boolean },
  ) {}

  sandboxAvailable(): boolean {
    return (this.options.useBubblewrap ?? true) && bubblewrapAvailable();
  }

  spawn(command: string, options: SpawnOptions): RunningCommand {
    const env = childEnvironment(this.options.baseEnv ?? process.env, this.options.stripEnvKeys, options.env);
    const wantsSandbox = options.sandbox !== undefined && options.sandbox.mode !== "danger-full-access";
    const sandboxed = wantsSandbox && this.sandboxAvailable();
    if (wantsSandbox && !sandboxed && this.options.sandboxRequired) throw new SandboxUnavailableError();
    const child =
      sandboxed && options.sandbox
        ? spawn("bwrap", [...bubblewrapArgs(options.sandbox, options.cwd), "--", "bash", "-c", command], {
            cwd: options.cwd,
            env,
            detached: true,
            stdio: ["ignore", "pipe", "pipe"],
          })
        : spawn("bash", ["-c", command], {
            cwd: options.cwd,
            env,
            detached: true,
            stdio: ["ignore", "pipe", "pipe"],
          });
    const running = new LocalCommand(child, sandboxed, this.options.graceMs ?? KILL_GRACE_MS);
    this.running.add(running);
    void running.exited.then(() => this.running.delete(running));
    return running;
  }

  async execute(command: string, options: ExecuteOptions): Promise<ExecuteResult> {
    const running = this.spawn(command, options);
    const out = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
    running.onOutput((stream, chunk) => out[stream].push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void running.kill();
    }, options.timeoutMs);
    const onAbort = () => void running.kill();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const status = await running.exited;
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    return {
      ...status,
      stdout: Buffer.concat(out.stdout).toString("utf8"),
      stderr: Buffer.concat(out.stderr).toString("utf8"),
      timedOut,
    };
  }

  async cleanup(): Promise<void> {
    await Promise.all([...this.running].map((command) => command.kill()));
  }
}

class LocalCommand implements RunningCommand {
  readonly exited: Promise<ExitStatus>;
  exitStatus: ExitStatus | undefined;
  private readonly listeners = new Set<OutputListener>();

  constructor(
    private readonly child: ChildProcess,
    readonly sandboxed: boolean,
    private readonly graceMs: number,
  ) {
    child.stdout?.on("data", (chunk: Buffer) => this.emit("stdout", chunk));
    child.stderr?.on("data", (chunk: Buffer) => this.emit("stderr", chunk));
    this.exited = new Promise((resolve) => {
      // `close` waits for the pipes to drain, so no output arrives after `exited` resolves.
      child.once("close", (exitCode, signal) => {
        this.exitStatus = { exitCode, signal };
        resolve(this.exitStatus);
      });
      child.once("error", (error) => {
        this.emit("stderr", Buffer.from(`${error.message}\n`));
        this.exitStatus = { exitCode: 127, signal: null };
        resolve(this.exitStatus);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  onOutput(listener: OutputListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async kill(): Promise<ExitStatus> {
    if (this.exitStatus) return this.exitStatus;
    this.signalGroup("SIGTERM");
    const timer = setTimeout(() => this.signalGroup("SIGKILL"), this.graceMs);
    const status = await this.exited;
    clearTimeout(timer);
    return status;
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already.
    }
  }

  private emit(stream: "stdout" | "stderr", chunk: Buffer): void {
    for (const listener of this.listeners) listener(stream, chunk);
  }
}

export const localBackend: TerminalBackend = {
  name: "local",
  description: "Run commands on this machine (under bubblewrap when installed).",
  create: (options) => new LocalEnvironment(options),
};
