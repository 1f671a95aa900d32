/**
 * The `docker` terminal backend (Hermes in-tree `docker`): commands in a container driven by
 * the `docker` CLI.
 *
 * Invariants:
 * - The workspace is bind-mounted at its own path, so the file tools keep working on this host's files
 *   (no `files` of its own) and paths mean the same inside and out (`isContainer`).
 * - `terminal.container_persistent: true` (default): one container per workspace, kept across sessions
 *   (`docker start` when stopped). `false`: the provider is `sessionIsolatedWhenNonpersistent`, so each
 *   session gets its own container (its name carries the session id) and `cleanup()` removes it.
 * - A non-persistent container belongs to one agent, not to the session: its name also carries a random
 *   instance suffix. Two agents of one session can be open on one host at once (a session handed between
 *   two `bdsh serve`, a server evicting an idle agent while another process takes the session over), and
 *   an agent closing cannot know whether the other is running a command: removing a shared container would
 *   kill that command. Each agent removes only its own.
 * - Such a container is labelled with its owner (`bdsh.owner=<host>/<pid>`): one whose process died without
 *   closing (a crash, SIGKILL) is removed by the next bdsh process on that host that starts a non-persistent
 *   container, in the background. A container of a live process, or of another host, is never touched.
 * - Resource limits are config keys (`memory`, `cpus`, `pids_limit`, `network`), never free-form docker
 *   arguments (a project's config may not change `terminal.docker` at all).
 * - The container gets only the T7 variables, exported by the wrapper script after the
 *   `EnvironmentPolicy` filtered them; the docker CLI itself runs with the stripped environment.
 * - `isAvailable()` / `probe()` do not run docker: they look for the binary and the daemon's socket
 *   (`$DOCKER_HOST` or `/var/run/docker.sock`), so with no daemon they say so cleanly.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { delimiter, join } from "node:path";
import type {
  CreateEnvironmentOptions,
  ExecuteOptions,
  ExecuteResult,
  RunningCommand,
  SpawnOptions,
  TerminalEnvironment,
  TerminalEnvironmentProvider,
} from "../environment.js";
import { KILL_GRACE_MS } from "../local.js";
import { policyFor } from "../policy.js";
import { processAlive } from "../process-alive.js";
import {
  ChannelCommand,
  type ChannelHandle,
  executeBySpawn,
  RunningCommands,
  wrapRemoteCommand,
} from "../remote-shell.js";

export type DockerSettings = {
  image: string;
  memory: string;
  cpus: string;
  pids_limit: number;
  network: string;
};

export function dockerSettings(slice: Record<string, unknown> | undefined): DockerSettings {
  const s = (slice ?? {}) as Partial<DockerSettings>;
  return {
    image: s.image ?? "debian:stable-slim",
    memory: s.memory ?? "",
    cpus: s.cpus ?? "",
    pids_limit: s.pids_limit ?? 0,
    network: s.network ?? "",
  };
}

/**
 * The container's name: per workspace when persistent, per session (task id) otherwise, then per agent
 * (`instance`, a random suffix) when not persistent.
 */
export function containerName(workspace: string, taskId: string, instance?: string): string {
  const hash = createHash("sha256").update(workspace).digest("hex").slice(0, 12);
  const task = taskId.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 40) || "default";
  return `bdsh-${hash}-${task}${instance ? `-${instance}` : ""}`;
}

/** The label value naming the process that owns a non-persistent container. */
export function ownerLabel(pid: number = process.pid, host: string = hostname()): string {
  return `${host}/${pid}`;
}

/** `docker run` for the long-lived container commands are exec'd in. */
export function dockerRunArgs(input: {
  name: string;
  workspace: string;
  settings: DockerSettings;
  persistent: boolean;
  /** The owner label of a non-persistent container (`ownerLabel()`). */
  owner?: string;
}): string[] {
  const { settings } = input;
  const args = ["run", "-d", "--name", input.name, "--label", "bdsh.backend=docker"];
  if (!input.persistent) {
    args.push("--rm");
    if (input.owner) args.push("--label", `bdsh.owner=${input.owner}`);
  }
  args.push(
    "--mount",
    `type=bind,source=${input.workspace},target=${input.workspace}`,
    "-w",
    input.workspace,
  );
  if (settings.memory) args.push("--memory", settings.memory);
  if (settings.cpus) args.push("--cpus", settings.cpus);
  if (settings.pids_limit > 0) args.push("--pids-limit", String(settings.pids_limit));
  if (settings.network) args.push("--network", settings.network);
  args.push("--entrypoint", "sleep", settings.image, "infinity");
  return args;
}

/** `docker exec` for one command (the wrapper cds and exports; no `-e`, so no host variable leaks). */
export function dockerExecArgs(
  name: string,
  command: string,
  cwd: string,
  env: Record<string, string>,
): string[] {
  return ["exec", "-i", name, "sh", "-c", wrapRemoteCommand(command, cwd, env)];
}

/** Whether this process has looked for orphaned containers yet. */
let swept = false;

/**
 * Removes the non-persistent containers whose owner was a process of this host that is gone (it died
 * without its agents' `cleanup()`), through `docker` (`run` runs the CLI with its arguments). Failures are
 * ignored: a container left over costs memory, not correctness, and the next process tries again.
 */
export async function sweepOrphanedContainers(
  docker: (args: string[]) => Promise<{ code: number | null; output: string }>,
): Promise<string[]> {
  const listed = await docker([
    "ps",
    "-a",
    "--filter",
    "label=bdsh.backend=docker",
    "--filter",
    "label=bdsh.owner",
    "--format",
    '{{.Names}}\t{{.Label "bdsh.owner"}}',
  ]);
  if (listed.code !== 0) return [];
  const removed: string[] = [];
  for (const name of orphanedContainers(listed.output)) {
    if ((await docker(["rm", "-f", name])).code === 0) removed.push(name);
  }
  return removed;
}

/**
 * From `docker ps` lines (`<name>\t<owner label>`): the containers owned by a process of this host that is
 * no longer alive. A pid reused by another process keeps its container (left over, never wrongly removed).
 */
export function orphanedContainers(listing: string, host: string = hostname()): string[] {
  const names: string[] = [];
  for (const line of listing.split("\n")) {
    const [name, owner] = line.trim().split("\t");
    if (!name || !owner) continue;
    const slash = owner.lastIndexOf("/");
    const pid = Number(owner.slice(slash + 1));
    if (owner.slice(0, slash) !== host || !Number.isInteger(pid) || pid <= 0) continue;
    if (pid !== process.pid && !processAlive(pid)) names.push(name);
  }
  return names;
}

function which(binary: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    const path = join(dir, binary);
    if (dir && existsSync(path)) return path;
  }
  return undefined;
}

/** Whether a docker daemon looks reachable, without talking to it: a unix socket that exists, or a TCP host. */
export function dockerDaemonHint(env: NodeJS.ProcessEnv): { ok: boolean; detail: string } {
  const host = env.DOCKER_HOST;
  if (host && !host.startsWith("unix://")) return { ok: true, detail: `DOCKER_HOST ${host}` };
  const socket = host ? host.slice("unix://".length) : "/var/run/docker.sock";
  const isSocket = (() => {
    try {
      return statSync(socket).isSocket();
    } catch {
      return false;
    }
  })();
  return isSocket
    ? { ok: true, detail: `daemon socket ${socket}` }
    : { ok: false, detail: `no docker daemon socket at ${socket}` };
}

function channelOf(child: ChildProcess): ChannelHandle {
  let end: { exitCode: number | null; signal: string | null; lost?: string } | undefined;
  let listener: ((value: NonNullable<typeof end>) => void) | undefined;
  const finish = (value: NonNullable<typeof end>) => {
    if (end) return;
    end = value;
    listener?.(value);
  };
  child.once("close", (code, signal) => finish({ exitCode: code, signal }));
  child.once("error", (error) => finish({ exitCode: 127, signal: null, lost: `docker: ${error.message}` }));
  return {
    onStdout: (l) => child.stdout?.on("data", l),
    onStderr: (l) => child.stderr?.on("data", l),
    onEnd: (l) => {
      listener = l;
      if (end) l(end);
    },
  };
}

export class DockerEnvironment implements TerminalEnvironment {
  readonly backend = "docker";
  readonly name: string;
  private started: Promise<void> | undefined;
  private readonly running = new RunningCommands();

  constructor(
    private readonly settings: DockerSettings,
    private readonly options: CreateEnvironmentOptions,
    private readonly workspace: string,
  ) {
    this.name =
      (options.persistent ?? true)
        ? containerName(workspace, options.taskId)
        : containerName(workspace, options.taskId, randomBytes(4).toString("hex"));
  }

  sandboxAvailable(): boolean {
    return false;
  }

  private docker(args: string[]): ChildProcess {
    const env = policyFor(this.options).childEnvironment(this.options.baseEnv ?? process.env);
    return spawn("docker", args, { env, stdio: ["ignore", "pipe", "pipe"] });
  }

  private run(args: string[]): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve) => {
      const child = this.docker(args);
      let output = "";
      child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      child.once("error", (error) => resolve({ code: 127, output: error.message }));
      child.once("close", (code) => resolve({ code, output }));
    });
  }

  /** The container, started once: reused when running, started when stopped, created when missing. */
  private ensure(): Promise<void> {
    this.started ??= (async () => {
      const state = await this.run(["inspect", "-f", "{{.State.Running}}", this.name]);
      if (state.code === 0 && state.output.trim() === "true") return;
      const made =
        state.code === 0
          ? await this.run(["start", this.name])
          : await this.run(
              dockerRunArgs({
                name: this.name,
                workspace: this.workspace,
                settings: this.settings,
                persistent: this.options.persistent ?? true,
                owner: ownerLabel(),
              }),
            );
      if (!(this.options.persistent ?? true)) this.sweepOrphans();
      if (made.code !== 0) {
        this.started = undefined;
        throw new Error(`docker: cannot start container ${this.name}: ${made.output.trim()}`);
      }
    })();
    return this.started;
  }

  /** Once per process, in the background (`sweepOrphanedContainers`). */
  private sweepOrphans(): void {
    if (swept) return;
    swept = true;
    void sweepOrphanedContainers((args) => this.run(args)).catch(() => undefined);
  }

  spawn(command: string, options: SpawnOptions): RunningCommand {
    const env = policyFor(this.options).childEnvironment({}, options.env ?? {});
    const channel = this.ensure().then(() =>
      channelOf(this.docker(dockerExecArgs(this.name, command, options.cwd, env))),
    );
    const running = new ChannelCommand(
      channel,
      async (script) => {
        await this.run(["exec", this.name, "sh", "-c", script]);
      },
      KILL_GRACE_MS,
    );
    this.running.track(running);
    return running;
  }

  execute(command: string, options: ExecuteOptions): Promise<ExecuteResult> {
    return executeBySpawn(this.spawn(command, options), options.timeoutMs, options.signal);
  }

  async cleanup(): Promise<void> {
    await this.running.killAll();
    // This agent's own container goes with it; a persistent one stays for the next.
    if (this.started && !(this.options.persistent ?? true)) await this.run(["rm", "-f", this.name]);
  }
}

export function dockerProvider(
  settings: DockerSettings,
  env: NodeJS.ProcessEnv = process.env,
): TerminalEnvironmentProvider {
  const probe = () => {
    if (!which("docker", env)) return { ok: false, detail: "the docker CLI is not installed" };
    return dockerDaemonHint(env);
  };
  return {
    name: "docker",
    displayName: "Docker",
    description: "Run commands in a Docker container with the workspace bind-mounted (the docker CLI).",
    isRemote: false,
    isContainer: true,
    cachePathBase: null,
    stripEnvKeys: [],
    // The container is not a sandbox for the workspace it mounts read-write: keep the guard on.
    skipContainerGuards: false,
    sessionIsolatedWhenNonpersistent: true,
    get envDescription() {
      return `Commands run in a Docker container (image ${settings.image}); the workspace is mounted at the same path, other paths are the container's.`;
    },
    isAvailable: () => probe().ok,
    probe,
    doctorChecks: () => {
      const result = probe();
      return [
        result.ok
          ? { status: "ok", name: "backend docker", detail: `${result.detail}; image ${settings.image}` }
          : { status: "fail", name: "backend docker", detail: `${result.detail}; ${dockerSetup}` },
      ];
    },
    setupInstructions: () => dockerSetup,
    createEnvironment: ({ containerConfig, ...options }) =>
      new DockerEnvironment(
        containerConfig ? dockerSettings(containerConfig) : settings,
        { ...options, containerConfig },
        typeof options.workspace === "string" ? options.workspace : options.cwd,
      ),
  };
}

const dockerSetup =
  "install Docker and start its daemon (the docker CLI must reach it), then set terminal.backend: docker and terminal.docker.image";
