/**
 * Commands on a shell this process does not own (SSH, `docker exec`): the wrapper that makes a
 * remote command killable as a process group, and the `RunningCommand` built on a byte channel.
 *
 * Invariants:
 * - The remote shell starts the command as a background job under `setsid` (or `set -m` without it), so
 *   it leads its own process group, and reports that group's pid on stderr as one marker line before anything waits. The marker is
 *   removed from the output the model sees; a kill is `kill -TERM -- -<pid>`, then `-KILL` after the grace
 *   period (T8), sent on a separate channel, and resolves when the command's channel closed.
 * - Only the variables given (the T7 ones, already filtered by the `EnvironmentPolicy`) are exported on
 *   the remote side; this process's environment is never sent.
 * - A channel that closes without an exit status (connection lost) ends with `lost` set and a null exit
 *   code: the result says the outcome is unknown, never a made-up exit code.
 */
import type { ExecuteResult, ExitStatus, OutputListener, RunningCommand } from "./environment.js";

export const PID_MARKER = "\u001ebdsh-pid ";

/** Single-quoted for POSIX sh. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The script a remote shell runs for `command` in `cwd` with `env` exported.
 *
 * `sessionLeader`: the remote shell already leads its own session and process group (sshd calls
 * `setsid()` for every session), so its own pid is the group to kill: a bash login shell `eval`s the
 * command itself, any other shell `exec`s `bash -c`, and no process is spawned beyond what the command
 * needs (an exec costs as much as the rest of a command on a loaded host; bench/tools/ssh.ts). Otherwise
 * (`docker exec`) the command runs as a background job under `setsid` and the shell waits for it.
 */
export function wrapRemoteCommand(
  command: string,
  cwd: string,
  env: Record<string, string> = {},
  options: { sessionLeader?: boolean } = {},
): string {
  const exports = Object.entries(env)
    .filter(([key]) => ENV_NAME.test(key))
    .map(([key, value]) => `export ${key}=${shellQuote(value)}`);
  const marker = (pid: string) => `printf '${PID_MARKER.replace("\u001e", "\\036")}%s\\n' "${pid}" >&2`;
  const quoted = shellQuote(command);
  if (options.sessionLeader) {
    return [
      `cd -- ${shellQuote(cwd)} || exit 1`,
      ...exports,
      marker("$$"),
      "exec </dev/null",
      `if [ -n "\${BASH_VERSION:-}" ]; then eval ${shellQuote(command)}; else exec bash -c ${quoted}; fi`,
    ].join("\n");
  }
  return [
    `cd -- ${shellQuote(cwd)} || exit 1`,
    ...exports,
    // `setsid` makes the job its own process group without job control (whose notices would reach stderr).
    `if command -v setsid >/dev/null 2>&1; then setsid bash -c ${quoted} </dev/null & else set -m; bash -c ${quoted} </dev/null & fi`,
    "__bdsh_pid=$!",
    marker("$__bdsh_pid"),
    'wait "$__bdsh_pid"',
  ].join("\n");
}

const SIGNALS: Record<number, NodeJS.Signals> = { 1: "SIGHUP", 2: "SIGINT", 9: "SIGKILL", 15: "SIGTERM" };

/** A byte channel to a remote command: what `ChannelCommand` needs from SSH or `docker exec`. */
export type ChannelHandle = {
  onStdout(listener: (chunk: Buffer) => void): void;
  onStderr(listener: (chunk: Buffer) => void): void;
  /** Exactly once: the exit code (null when none was reported), or `lost` when the channel broke. */
  onEnd(listener: (end: { exitCode: number | null; signal: string | null; lost?: string }) => void): void;
};

export class ChannelCommand implements RunningCommand {
  readonly sandboxed = false;
  readonly exited: Promise<ExitStatus>;
  exitStatus: ExitStatus | undefined;
  private readonly listeners = new Set<OutputListener>();
  private remotePid: number | undefined;
  private readonly pidKnown: Promise<void>;
  private markPid!: () => void;
  private pending: Buffer[] | undefined = [];
  private pendingBytes = 0;
  private killing = false;
  private resolveExit!: (status: ExitStatus) => void;

  constructor(
    start: Promise<ChannelHandle>,
    /** Runs a one-off command on the same host (the kill). */
    private readonly signalRemote: (script: string) => Promise<void>,
    private readonly graceMs: number,
  ) {
    this.pidKnown = new Promise((resolve) => {
      this.markPid = resolve;
    });
    this.exited = new Promise((resolve) => {
      this.resolveExit = resolve;
    });
    start.then(
      (channel) => {
        channel.onStdout((chunk) => this.emit("stdout", chunk));
        channel.onStderr((chunk) => this.stderr(chunk));
        channel.onEnd((end) => this.finish(end));
      },
      (error: unknown) => {
        this.emit("stderr", Buffer.from(`${error instanceof Error ? error.message : String(error)}\n`));
        this.finish({ exitCode: 255, signal: null });
      },
    );
  }

  get pid(): number | undefined {
    return this.remotePid;
  }

  onOutput(listener: OutputListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async kill(): Promise<ExitStatus> {
    if (this.exitStatus) return this.exitStatus;
    this.killing = true;
    await Promise.race([this.pidKnown, this.exited]);
    if (this.exitStatus) return this.exitStatus;
    const pid = this.remotePid!;
    const send = (signal: string) =>
      this.signalRemote(
        `kill -${signal} -- -${pid} 2>/dev/null || kill -${signal} ${pid} 2>/dev/null; true`,
      ).catch(() => undefined);
    await send("TERM");
    const timer = setTimeout(() => void send("KILL"), this.graceMs);
    const status = await this.exited;
    clearTimeout(timer);
    return status;
  }

  private finish(end: { exitCode: number | null; signal: string | null; lost?: string }): void {
    if (this.exitStatus) return;
    this.flushPending();
    this.markPid();
    let { exitCode } = end;
    let signal = (
      end.signal ? (end.signal.startsWith("SIG") ? end.signal : `SIG${end.signal}`) : null
    ) as NodeJS.Signals | null;
    // The remote shell reports a job killed by signal N as 128+N.
    if (this.killing && exitCode !== null && exitCode > 128 && SIGNALS[exitCode - 128]) {
      signal = SIGNALS[exitCode - 128]!;
      exitCode = null;
    }
    this.exitStatus = end.lost ? { exitCode: null, signal: null, lost: end.lost } : { exitCode, signal };
    this.resolveExit(this.exitStatus);
  }

  /** Holds stderr back until the pid marker went by, and removes it. */
  private stderr(chunk: Buffer): void {
    if (this.pending === undefined) {
      this.emit("stderr", chunk);
      return;
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const text = Buffer.concat(this.pending).toString("latin1");
    const at = text.indexOf(PID_MARKER);
    const end = at < 0 ? -1 : text.indexOf("\n", at);
    if (end >= 0) {
      this.remotePid = Number.parseInt(text.slice(at + PID_MARKER.length, end), 10);
      this.pending = undefined;
      this.markPid();
      const rest = Buffer.from(text.slice(0, at) + text.slice(end + 1), "latin1");
      if (rest.length > 0) this.emit("stderr", rest);
    } else if (this.pendingBytes > 65_536) {
      this.flushPending();
    }
  }

  private flushPending(): void {
    if (this.pending === undefined) return;
    const all = Buffer.concat(this.pending);
    this.pending = undefined;
    if (all.length > 0) this.emit("stderr", all);
  }

  private emit(stream: "stdout" | "stderr", chunk: Buffer): void {
    for (const listener of this.listeners) listener(stream, chunk);
  }
}

/** `execute` for environments built on `spawn`: collect, deadline, abort (T8). */
export async function executeBySpawn(
  running: RunningCommand,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<ExecuteResult> {
  const out = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  running.onOutput((stream, chunk) => out[stream].push(chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void running.kill();
  }, timeoutMs);
  const onAbort = () => void running.kill();
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) onAbort();
  const status = await running.exited;
  clearTimeout(timer);
  signal?.removeEventListener("abort", onAbort);
  const stdout = Buffer.concat(out.stdout).toString("utf8");
  const stderr = Buffer.concat(out.stderr).toString("utf8");
  return { ...status, stdout, stderr, output: joinOutput(stdout, stderr), timedOut };
}

/** The commands an environment has running: tracked from start to exit, all killed at its cleanup. */
export class RunningCommands {
  private readonly commands = new Set<RunningCommand>();

  track<T extends RunningCommand>(command: T): T {
    this.commands.add(command);
    void command.exited.then(() => this.commands.delete(command));
    return command;
  }

  async killAll(): Promise<void> {
    await Promise.all([...this.commands].map((command) => command.kill()));
  }
}

export function joinOutput(stdout: string, stderr: string): string {
  return stderr === "" ? stdout : stdout === "" ? stderr : `${stdout.replace(/\n?$/, "\n")}${stderr}`;
}
