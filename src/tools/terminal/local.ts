/**
 * The `local` terminal backend: `bash -c` on this machine, under bubblewrap when the sandbox mode asks for
 * it and `bwrap` works (T17).
 *
 * Invariants:
 * - The child is the leader of a new process group (`detached`), so a kill reaches everything it started.
 * - Kill is SIGTERM to the group, then SIGKILL after `graceMs` (T8: 3 s); it resolves on exit.
 * - Under bwrap the command runs in the sandbox's own session and PID namespace, kept alive by its init (the
 *   `child-pid` bwrap reports on `--info-fd`). Killed in the first milliseconds, the outer bwrap can die
 *   before the init has armed `--die-with-parent`, and the command would outlive the kill holding the pipes
 *   open. So a kill waits for that report (bwrap writes it before the command starts), and when the outer
 *   bwrap has exited but the pipes are still open, SIGKILLs the init, which ends the whole namespace.
 * - With `sandboxRequired`, a sandboxed mode without bwrap refuses to spawn instead of running unsandboxed.
 * - Every mode runs under bwrap when it works, danger-full-access included (whole filesystem writable,
 *   host devices, but a new PID namespace and a fresh `/proc`, so a command cannot read the harness's
 *   environment from `/proc/<pid>/environ`).
 * - The environment is always the `EnvironmentPolicy`'s (child-env.ts): secrets stripped (a command
 *   the model writes never sees a key), plus `TMPDIR`.
 * - The session's temp dir (`tempDir`) is a host directory `<os tmp>/bdsh-sessions-<uid>/<session>-<hash>`
 *   (session-temp-dir.ts: the same path on every server), mode 0700, made before each command that runs,
 *   writable in every mode. `cleanup()` (agent close) leaves it to the session: another server on this host
 *   may drive the session by now; unused dirs are swept after a day (session-temp-dir.ts). `$BDSH_HOME`
 *   (`home`) is masked inside the sandbox (finding 3).
 * - The network (`network`, default off; sandbox-network.ts): a sandboxed command in any mode but
 *   danger-full-access gets its own network namespace unless the mode is `on`. Under `proxy` the harness's
 *   egress proxy starts on the first such command and stops in `cleanup()`, and the command runs behind the
 *   in-sandbox relay (proxy-bridge.ts). Where bwrap cannot make a network namespace, `sandboxRequired`
 *   refuses the command; otherwise it runs with the host network and `network` says `on`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import {
  bubblewrapArgs,
  bubblewrapAvailable,
  networkIsolationAvailable,
  releaseMountPoints,
} from "./bubblewrap.js";
import type { EnvironmentPolicy } from "./child-env.js";
import { EgressProxy } from "./egress-proxy.js";
import type {
  EnvironmentFactoryOptions,
  ExecuteOptions,
  ExecuteResult,
  ExitStatus,
  OutputListener,
  RunningCommand,
  SpawnOptions,
  TerminalEnvironment,
  TerminalEnvironmentProvider,
} from "./environment.js";
import { policyFor } from "./policy.js";
import { relayArgv } from "./proxy-bridge.js";
import { executeBySpawn, RunningCommands } from "./remote-shell.js";
import type { SandboxNetwork } from "./sandbox-network.js";
import { ensureSessionTempDir, releaseSessionTempDir, sessionTempPath } from "./session-temp-dir.js";

const NO_NETWORK: SandboxNetwork = { mode: "off", allow: [] };

export const KILL_GRACE_MS = 3_000;

export class SandboxUnavailableError extends Error {
  constructor(why = "bubblewrap (bwrap) is not available") {
    super(`sandbox_required is set, but ${why}; the command was not run`);
    this.name = "SandboxUnavailableError";
  }
}

export class LocalEnvironment implements TerminalEnvironment {
  readonly backend = "local";
  private readonly running = new RunningCommands();
  private temp: string | undefined;
  private readonly policy: EnvironmentPolicy;

  constructor(
    private readonly options: EnvironmentFactoryOptions & { graceMs?: number; useBubblewrap?: boolean },
  ) {
    this.policy = policyFor(options);
  }

  sandboxAvailable(): boolean {
    return (this.options.useBubblewrap ?? true) && bubblewrapAvailable();
  }

  /** The network sandboxed commands get here: the configured mode, or `on` where it cannot be applied. */
  get network(): SandboxNetwork {
    const wanted = this.options.network ?? NO_NETWORK;
    if (wanted.mode === "on" || !this.sandboxAvailable() || networkIsolationAvailable()) return wanted;
    return { mode: "on", allow: [] };
  }

  /** The egress proxy's socket (started on first use), for `proxy` mode. */
  private proxySocket(): string {
    this.proxy ??= new EgressProxy(this.options.network?.allow ?? [], this.options.home);
    return this.proxy.listen();
  }
  private proxy: EgressProxy | undefined;

  /** The session's private temp dir (`$TMPDIR` of every command); made when a command is about to run. */
  get tempDir(): string {
    this.temp ??= sessionTempPath(this.options.sessionId, this.options.cwd);
    return this.temp;
  }

  spawn(command: string, options: SpawnOptions): RunningCommand {
    const tempDir = this.tempDir;
    // Made again if it went (the stale sweep, or a command's own `rm`).
    ensureSessionTempDir(tempDir);
    const env = this.policy.childEnvironment(this.options.baseEnv ?? process.env, {
      ...options.env,
      TMPDIR: tempDir,
    });
    const wantsSandbox = options.sandbox !== undefined && options.sandbox.mode !== "danger-full-access";
    const sandboxed = options.sandbox !== undefined && this.sandboxAvailable();
    if (wantsSandbox && !sandboxed && this.options.sandboxRequired) throw new SandboxUnavailableError();
    const wanted = this.options.network ?? NO_NETWORK;
    const isolate = sandboxed && wanted.mode !== "on" && options.sandbox?.mode !== "danger-full-access";
    if (isolate && !networkIsolationAvailable() && this.options.sandboxRequired)
      throw new SandboxUnavailableError("bubblewrap cannot make a network namespace here (--unshare-net)");
    const isolated = isolate && networkIsolationAvailable();
    const socket = isolated && wanted.mode === "proxy" ? this.proxySocket() : undefined;
    const extras = {
      tempDir,
      hide: this.options.home ? [this.options.home] : [],
      isolateNetwork: isolated,
      ...(socket ? { proxyDir: dirname(socket) } : {}),
      ...(this.options.projectRoots ? { projectRoots: this.options.projectRoots } : {}),
    };
    const argv = socket ? relayArgv(socket, ["bash", "-c", command]) : ["bash", "-c", command];
    const sandbox =
      sandboxed && options.sandbox ? bubblewrapArgs(options.sandbox, options.cwd, extras) : undefined;
    const child = sandbox
      ? spawn("bwrap", [...sandbox.args, "--info-fd", "3", "--", ...argv], {
          cwd: options.cwd,
          env,
          detached: true,
          // fd 3: bwrap's setup report; bwrap closes it before the command starts, so no command writes it.
          stdio: ["ignore", "pipe", "pipe", "pipe"],
        })
      : spawn("bash", ["-c", command], {
          cwd: options.cwd,
          env,
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
        });
    const running = new LocalCommand(child, sandboxed, this.options.graceMs ?? KILL_GRACE_MS);
    // The protected paths' mount points made for this sandbox go once it has ended (bubblewrap.ts).
    if (sandbox?.mountPoints.length) void running.exited.then(() => releaseMountPoints(sandbox.mountPoints));
    this.running.track(running);
    return running;
  }

  execute(command: string, options: ExecuteOptions): Promise<ExecuteResult> {
    return executeBySpawn(this.spawn(command, options), options.timeoutMs, options.signal);
  }

  async cleanup(): Promise<void> {
    await this.running.killAll();
    await this.proxy?.close();
    this.proxy = undefined;
    // The shared dir is the session's, and another process may be driving it by now (session-temp-dir.ts).
    if (this.temp !== undefined) releaseSessionTempDir(this.temp);
    this.temp = undefined;
  }
}

class LocalCommand implements RunningCommand {
  readonly exited: Promise<ExitStatus>;
  exitStatus: ExitStatus | undefined;
  private readonly listeners = new Set<OutputListener>();
  /** Resolves with the sandbox init's host pid once bwrap has reported it (undefined if it never does). */
  private readonly sandboxInit: Promise<number | undefined>;
  private sandboxPid: number | undefined;
  private killing = false;

  constructor(
    private readonly child: ChildProcess,
    readonly sandboxed: boolean,
    private readonly graceMs: number,
  ) {
    if (child.pid !== undefined) this.ticks = processStartTicks(child.pid);
    child.stdout?.on("data", (chunk: Buffer) => this.emit("stdout", chunk));
    child.stderr?.on("data", (chunk: Buffer) => this.emit("stderr", chunk));
    this.sandboxInit = sandboxed ? readSandboxPid(child) : Promise.resolve(undefined);
    void this.sandboxInit.then((pid) => {
      this.sandboxPid = pid;
    });
    // The outer bwrap is gone; if the pipes are still open, its sandbox outlived it (see the header).
    child.once("exit", () => {
      if (this.killing && this.exitStatus === undefined) this.killSandbox();
    });
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

  /** Read once, right after the spawn, for PID-safe adoption after a restart. */
  get startTicks(): number | undefined {
    if (this.ticks === undefined && this.child.pid !== undefined)
      this.ticks = processStartTicks(this.child.pid);
    return this.ticks;
  }
  private ticks: number | undefined;

  onOutput(listener: OutputListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async kill(): Promise<ExitStatus> {
    if (this.exitStatus) return this.exitStatus;
    this.killing = true;
    if (this.sandboxed) await Promise.race([this.sandboxInit, this.exited]);
    if (this.exitStatus) return this.exitStatus;
    this.signalGroup("SIGTERM");
    if (this.child.exitCode !== null || this.child.signalCode !== null) this.killSandbox();
    const timer = setTimeout(() => {
      this.signalGroup("SIGKILL");
      this.killSandbox();
    }, this.graceMs);
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

  private killSandbox(): void {
    if (this.sandboxPid === undefined) return;
    try {
      process.kill(this.sandboxPid, "SIGKILL");
    } catch {
      // The sandbox is gone already.
    }
  }

  private emit(stream: "stdout" | "stderr", chunk: Buffer): void {
    for (const listener of this.listeners) listener(stream, chunk);
  }
}

/** The `child-pid` of bwrap's `--info-fd` report (a JSON object written, then the fd closed, before exec). */
function readSandboxPid(child: ChildProcess): Promise<number | undefined> {
  const info = child.stdio[3];
  if (!info) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    info.on("data", (chunk: Buffer) => chunks.push(chunk));
    const done = () => {
      try {
        const pid = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { "child-pid"?: unknown })[
          "child-pid"
        ];
        resolve(typeof pid === "number" && Number.isInteger(pid) && pid > 1 ? pid : undefined);
      } catch {
        resolve(undefined);
      }
    };
    info.once("end", done);
    info.once("error", done);
    child.once("exit", () => setImmediate(done));
  });
}

/** The `local` provider (Hermes's in-tree `local`), with bubblewrap when it works. */
export const localBackend: TerminalEnvironmentProvider = {
  name: "local",
  displayName: "Local",
  description: "Run commands on this machine (under bubblewrap when installed).",
  isRemote: false,
  isContainer: false,
  cachePathBase: null,
  stripEnvKeys: [],
  skipContainerGuards: false,
  sessionIsolatedWhenNonpersistent: false,
  isAvailable: () => true,
  probe: () =>
    bubblewrapAvailable()
      ? { ok: true, detail: "available; commands run under bubblewrap" }
      : { ok: true, detail: "available; bubblewrap not usable, commands run without an OS sandbox" },
  doctorChecks: () => [],
  setupInstructions: () => "Nothing to set up; install bubblewrap (bwrap) for the command sandbox.",
  createEnvironment: (options) => new LocalEnvironment(options),
};

/** Field 22 of `/proc/<pid>/stat`: the process's start time in clock ticks since boot (undefined if gone). */
export function processStartTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}
