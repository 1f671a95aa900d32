/**
 * One agent's terminal: the backend registry with the built-ins and `$BDSH_HOME`'s backend
 * plugins, the environment `terminal.backend` selects, the job store with durable receipts, adoption of
 * this host's checkpoints after a restart, and the backend's line in the runtime context (L13).
 *
 * Invariants:
 * - The registry is consulted for every classification (remote, container, guards, isolation, strip
 *   keys); nothing here names a backend except the default.
 * - `isRemote` and `envDescription` reach the model as a runtime-context fact (L13, a user message when it
 *   changes), never by rewriting the system prompt. The local backend adds no fact.
 * - Receipts are redacted with the process's redactor and written to `store.processReceipts`; the full
 *   output goes to the store's blobs.
 * - After a restart, a checkpoint of this host for this session whose pid and start time both match is
 *   adopted as a running job (no output: its pipes died with the old process; its exit is watched); any
 *   other is marked lost.
 */
import type { Config } from "../../config/schema.js";
import type { Redactor } from "../../log/redact.js";
import type { Store } from "../../store/store.js";
import { InMemoryJobStore, type JobNotice } from "../jobs/job-store.js";
import { JobReceipts, processHost, receiptInfo } from "../jobs/receipts.js";
import type { ExitStatus, OutputListener, RunningCommand } from "../terminal/environment.js";
import { type BackendPluginReport, loadBackendPlugins } from "./backend-plugins.js";
import type { TerminalBackendRegistry, TerminalEnvironment } from "./environment.js";
import { processStartTicks } from "./local.js";
import { builtinRegistry } from "./providers/index.js";

/** Runtime-context order of the backend fact: after the command sandbox (112), before approval (115). */
export const TERMINAL_CONTEXT_ORDER = 113;

export function backendFact(terminal: TerminalEnvironment): string | undefined {
  const traits = terminal.traits;
  if (!traits || (!traits.isRemote && !traits.isContainer && !traits.envDescription)) return undefined;
  const where = traits.isRemote ? "remote" : traits.isContainer ? "container" : "local";
  return `Terminal backend: ${traits.name} (${where}).${traits.envDescription ? ` ${traits.envDescription}` : ""}`;
}

/** The built-in registry plus `$BDSH_HOME/plugins/<name>/` backends. */
export async function terminalRegistry(options: {
  config: Config;
  home: string;
  workspace: string;
  env: NodeJS.ProcessEnv;
}): Promise<{ backends: TerminalBackendRegistry; report: BackendPluginReport }> {
  const backends = builtinRegistry({
    ssh: options.config.terminal.ssh,
    docker: options.config.terminal.docker,
    env: options.env,
  });
  const report = await loadBackendPlugins({
    home: options.home,
    workspace: options.workspace,
    registry: backends,
  });
  return { backends, report };
}

export type TerminalSetup = {
  terminal: TerminalEnvironment;
  jobs: InMemoryJobStore;
  receipts: JobReceipts;
};

/** What the terminal needs from the agent it serves (the tools plugin passes these from its context). */
export type TerminalHost = {
  sessionId: string;
  workspace: string;
  cwd: string;
  store: Pick<Store, "processReceipts" | "getSession" | "getLease">;
  /** Where a job's full output goes: the spill store, so it counts against the same quotas (C14). */
  blobs: Pick<Store, "putBlob">;
  /** Registers the backend's runtime-context fact (L13). */
  addContext(context: { name: string; order: number; render: () => string | undefined }): void;
};

/** The environment, the job store and the receipts of one agent; registers the runtime-context fact. */
export async function setupTerminal(
  host: TerminalHost,
  options: {
    config: Config;
    backends: TerminalBackendRegistry;
    home: string;
    env: NodeJS.ProcessEnv;
    harnessEnvKeys: readonly string[];
    redactor: Redactor;
    onNotice: (notice: JobNotice) => void;
    /** Trusted project directories (their `.bdsh` stays read-only to commands inside the workspace). */
    projectRoots?: readonly string[];
  },
): Promise<TerminalSetup> {
  const { config } = options;
  const name = config.terminal.backend;
  const traits = options.backends.traits(name);
  const containerConfig =
    name === "ssh" ? config.terminal.ssh : name === "docker" ? config.terminal.docker : undefined;
  const terminal = options.backends.create(name, {
    cwd: host.cwd,
    workspace: host.workspace,
    stripEnvKeys: config.terminal.strip_env_keys,
    passEnvKeys: config.terminal.pass_env_keys,
    harnessEnvKeys: options.harnessEnvKeys,
    sandboxRequired: config.sandbox_required,
    baseEnv: options.env,
    home: options.home, // masked inside the sandbox
    sessionId: host.sessionId,
    network: { mode: config.sandbox_network, allow: config.sandbox_proxy_allow },
    ...(options.projectRoots ? { projectRoots: options.projectRoots } : {}),
    timeout: config.tools.bash.timeout_ms,
    persistent: config.terminal.container_persistent,
    ...(containerConfig ? { containerConfig } : {}),
    ...(name === "docker" ? { image: config.terminal.docker.image } : {}),
  });
  const { store, blobs } = host;
  const receipts = new JobReceipts({
    receipts: store.processReceipts,
    redact: (text) => options.redactor.text(text),
    putBlob: (sessionId, content) => blobs.putBlob(sessionId, content, { kind: "job-output" }),
    host: processHost(),
    backend: traits?.name ?? name,
    retention: {
      maxAgeMs: config.terminal.receipts.max_age_days * 24 * 3600 * 1000,
      maxPerSession: config.terminal.receipts.max_per_session,
    },
    getSession: (id) => store.getSession(id),
    // The lease `bdsh serve` holds while a job runs (server/lost-jobs.ts `job:<session>:<job>`).
    runningElsewhere: async (receipt) =>
      (await store.getLease(`job:${receipt.sessionId}:${receipt.jobId}`)) !== undefined,
  });
  const jobs = new InMemoryJobStore({ onNotice: options.onNotice, receipts });
  await adoptAfterRestart(host.sessionId, receipts, jobs).catch(() => undefined);
  host.addContext({
    name: "terminal-backend",
    order: TERMINAL_CONTEXT_ORDER,
    render: () => backendFact(terminal),
  });
  return { terminal, jobs, receipts };
}

const RESTART_LOST =
  "the server restarted while it ran, and the process is gone (or its pid now belongs to another process)";

async function adoptAfterRestart(
  sessionId: string,
  receipts: JobReceipts,
  jobs: InMemoryJobStore,
): Promise<void> {
  const { adopt, lost } = await receipts.checkpointsAfterRestart(sessionId);
  for (const row of lost) await receipts.markLost(row, RESTART_LOST);
  for (const row of adopt) {
    jobs.adoptRestored({
      info: receiptInfo(row),
      command: new AdoptedProcess(row.pid!, row.startTicks!),
      commandLine: row.command,
    });
  }
}

/** A process of this host started before a restart: no pipes, so no output and no exit code; kill works. */
export class AdoptedProcess implements RunningCommand {
  readonly sandboxed = false;
  readonly exited: Promise<ExitStatus>;
  exitStatus: ExitStatus | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly pid: number,
    readonly startTicks: number,
    pollMs = 500,
  ) {
    this.exited = new Promise((resolve) => {
      const check = () => {
        if (processStartTicks(pid) === startTicks) return;
        clearInterval(this.timer);
        this.exitStatus = {
          exitCode: null,
          signal: null,
          lost: "it ran across a server restart, so its exit status and the output after the restart are unknown",
        };
        resolve(this.exitStatus);
      };
      this.timer = setInterval(check, pollMs);
      this.timer.unref();
    });
  }

  onOutput(_listener: OutputListener): () => void {
    return () => {};
  }

  async kill(): Promise<ExitStatus> {
    if (this.exitStatus) return this.exitStatus;
    // Only while the pid still is the process we recorded.
    if (processStartTicks(this.pid) === this.startTicks) {
      try {
        process.kill(-this.pid, "SIGTERM");
      } catch {
        try {
          process.kill(this.pid, "SIGTERM");
        } catch {}
      }
    }
    return this.exited;
  }
}
