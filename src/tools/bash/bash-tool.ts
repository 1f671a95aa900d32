/**
 * `bash` (T7, T8, T17): one `bash -c` per call through the session's terminal environment.
 *
 * Invariants:
 * - A non-zero exit is not a tool error; the text says `[exit code: N]`.
 * - The result keeps the last 64,000 bytes per stream; when more was written, the full output is a blob
 *   and the result names its locator.
 * - On the deadline the command is not killed when a job store exists: it becomes a background job (T8).
 *   Without one it is killed (SIGTERM, SIGKILL after 3 s) and the result says `[timed out after <ms>ms]`.
 * - `sandbox_permissions` wider than the session's mode needs the user's approval every time (T17).
 * - The command runs on the session's backend (local, ssh, docker, a plugin); on a remote one
 *   `workdir` is resolved against the remote working directory. A backend that lost the command (an SSH
 *   connection dropped) is reported as `[stopped: <why>]` with no exit code: the outcome is unknown.
 * - Details (`command`): the same facts as the text's markers (exit code, signal, timeout, the full
 *   output's locator, the job it became, a sandbox denial), as data for the views.
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { requestApproval } from "../approvals.js";
import { remoteJoin } from "../files/remote-files.js";
import { type Static, StringEnum, Type, toolParameters } from "../schema.js";
import { spillLocator } from "../spill/blob-store.js";
import { droppedNotice, SpillQuotaError } from "../spill/spill-quota.js";
import type { RunningCommand } from "../terminal/environment.js";
import { networkDenialSeen, networkDenialText } from "../terminal/sandbox-network.js";
import type { SandboxMode, ToolDefinition, ToolExec, ToolOutput } from "../types.js";
import { formatBashResult, movedToBackgroundText, sandboxDenialSeen } from "./bash-result.js";
import { StreamCapture } from "./output-capture.js";

export type BashArgs = Static<ReturnType<typeof makeBashSchema>>;

export type BashToolOptions = { timeoutMs: number; maxTimeoutMs: number; maxOutputBytes: number };

export const BASH_DEFAULTS: BashToolOptions = {
  timeoutMs: 60_000,
  maxTimeoutMs: 600_000,
  maxOutputBytes: 64_000,
};

/** T7 environment, plus the managed `$BDSH_*` facts. */
export function bashEnvironment(exec: ToolExec): Record<string, string> {
  return {
    NO_COLOR: "1",
    TERM: "dumb",
    PAGER: "cat",
    GIT_PAGER: "cat",
    BDSH_WORKSPACE: exec.workspace,
    BDSH_SESSION_ID: exec.session.sessionId,
    BDSH_SANDBOX: exec.sandbox,
  };
}

const MODE_RANK: Record<SandboxMode, number> = {
  "read-only": 0,
  "workspace-write": 1,
  "danger-full-access": 2,
};

const DESCRIPTION =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: `${VAR:?}` is shell syntax the model should write.
  "Run a bash command (`bash -c`) and return its stdout and stderr. Every call starts a fresh shell: pass `workdir` rather than using `cd`. The `$BDSH_*` variables describe the harness environment. Long output is cut to its tail, and the full output is stored at a locator given in the result. Put `description` before `command` in the arguments. Before deleting or moving anything, check that the resolved absolute target path is the one you mean; never run such a command on a computed path you have not checked. A variable that is not set expands to nothing, so protect variables used in such paths with `${VAR:?}`. A file sandbox may apply: a refused file operation shows up as `[sandbox: file access denied under <mode> mode]`, which is a policy decision, so do not look for another way around it. The same holds for the network: a connection refused by the sandbox shows up as `[sandbox: network access denied under sandbox_network <mode> …]`.";

/**
 * The arguments' schema for these bounds, made once per process and bounds: every agent of a server has the
 * same config, so they share one schema and so one declaration, whose JSON is written once (registry.ts).
 */
const schemas = new Map<string, ReturnType<typeof makeBashSchema>>();
function bashSchema(options: BashToolOptions): ReturnType<typeof makeBashSchema> {
  const key = `${options.timeoutMs}:${options.maxTimeoutMs}`;
  let schema = schemas.get(key);
  if (!schema) {
    schema = makeBashSchema(options);
    schemas.set(key, schema);
  }
  return schema;
}

/** The arguments; the timeout's bound and default are the configured ones. */
function makeBashSchema(options: BashToolOptions) {
  return Type.Object(
    {
      description: Type.String({
        description: "What this command does, in active voice, 5-10 words (shown in the UI).",
      }),
      command: Type.String({ description: "The command to run." }),
      timeout_ms: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: options.maxTimeoutMs,
          description: `Deadline in milliseconds (default ${options.timeoutMs}, at most ${options.maxTimeoutMs}). On expiry the command moves to the background as a job instead of being killed.`,
        }),
      ),
      workdir: Type.Optional(
        Type.String({ description: "Working directory, absolute or relative to the current one." }),
      ),
      run_in_background: Type.Optional(
        Type.Boolean({
          description:
            "Run in the background and return a job id at once (read output with job_output, stop with job_kill). No timeout applies.",
        }),
      ),
      sandbox_permissions: Type.Optional(
        StringEnum(["workspace-write", "danger-full-access"], {
          description:
            "Only after a sandbox denial: the narrowest wider sandbox mode this exact command needs. The user is asked to approve.",
        }),
      ),
      justification: Type.Optional(
        Type.String({ description: "Why the wider sandbox mode is needed (shown to the user)." }),
      ),
    },
    { additionalProperties: false },
  );
}

export function createBashTool(options: BashToolOptions = BASH_DEFAULTS): ToolDefinition<BashArgs> {
  return {
    name: "bash",
    toolset: "terminal",
    description: DESCRIPTION,
    parameters: toolParameters(bashSchema(options)),
    isAvailable: ({ services }) => services.get("terminal") !== undefined,
    concurrency: "exclusive",
    execute: (args, exec) => runBash(args, exec, options),
  };
}

async function runBash(args: BashArgs, exec: ToolExec, options: BashToolOptions): Promise<ToolOutput> {
  const terminal = exec.services.require("terminal");
  // On a remote backend the working directory is the remote one, and only it can check it.
  const remote = terminal.remoteCwd !== undefined;
  const cwd = remote
    ? remoteJoin(terminal.remoteCwd ?? ".", args.workdir ?? ".")
    : resolve(exec.cwd, args.workdir ?? ".");
  if (!remote) {
    const info = await stat(cwd).catch(() => undefined);
    if (!info?.isDirectory()) throw new Error(`workdir "${cwd}" is not a directory`);
  }

  let mode = exec.sandbox;
  const wanted = args.sandbox_permissions;
  if (wanted && MODE_RANK[wanted] > MODE_RANK[mode]) {
    const outcome = await requestApproval(exec, {
      summary: `${args.command}`,
      reason: `run with sandbox "${wanted}" instead of "${mode}": ${args.justification ?? "(no justification given)"}`,
    });
    if (outcome.kind === "refused") {
      throw new Error(
        outcome.answer === "no-channel"
          ? `tool "bash" requires approval, but no approval channel is available`
          : outcome.reviewerNote !== undefined
            ? `the auto-reviewer refused escalating this command to "${wanted}" (${outcome.reviewerNote}); it stays denied, so stop and explain instead of working around it`
            : `the user rejected escalating this command to "${wanted}"; it stays denied, so stop and explain instead of working around it`,
      );
    }
    mode = wanted;
  }

  const spawnOptions = { cwd, env: bashEnvironment(exec), sandbox: { mode, workspace: exec.workspace } };
  const label = args.description || args.command;
  const jobs = exec.services.get("jobs");
  if (args.run_in_background) {
    if (!jobs) throw new Error("background jobs are not available");
    const running = terminal.spawn(args.command, spawnOptions);
    const job = await adoptOrKill(jobs.adopt.bind(jobs), exec, label, running, args.command);
    return {
      text: `started background job ${job.id}`,
      details: { kind: "command", truncated: false, jobId: job.id },
    };
  }

  const running = terminal.spawn(args.command, spawnOptions);
  const stdout = new StreamCapture(options.maxOutputBytes);
  const stderr = new StreamCapture(options.maxOutputBytes);
  const detach = running.onOutput((stream, chunk) => (stream === "stdout" ? stdout : stderr).append(chunk));
  const timeoutMs = Math.min(args.timeout_ms ?? options.timeoutMs, options.maxTimeoutMs);
  const ending = await raceExit(running, timeoutMs, exec.signal);

  if (ending === "timeout" && jobs) {
    detach();
    try {
      const job = await adoptOrKill(jobs.adopt.bind(jobs), exec, label, running, args.command);
      const sofar = formatBashResult({ stdout: stdout.tail(), stderr: stderr.tail() });
      return {
        text: `${sofar}\n${movedToBackgroundText(timeoutMs, job.id)}`,
        details: { kind: "command", truncated: false, jobId: job.id },
      };
    } catch {
      // The job limit was reached: fall back to the kill below (adoptOrKill already killed it).
    }
  }
  if (ending !== "exit") await running.kill();
  detach();
  const status = await running.exited;
  const truncated = stdout.truncated || stderr.truncated;
  const locator = truncated ? await spillFullOutput(exec, stdout, stderr) : undefined;
  const stderrTail = stderr.tail();
  // EROFS anywhere, or EACCES on a path outside the writable roots.
  const writableRoots = mode === "read-only" ? [] : [exec.workspace];
  if (terminal.tempDir) writableRoots.push(terminal.tempDir);
  const denied =
    running.sandboxed && mode !== "danger-full-access"
      ? sandboxDenialSeen(stderrTail, cwd, writableRoots)
      : running.sandboxed && /Read-only file system/.test(stderrTail);
  // A connection that failed in a session without (full) network: say which setting refused it.
  const network = terminal.network;
  const networkDenied =
    running.sandboxed &&
    mode !== "danger-full-access" &&
    network !== undefined &&
    network.mode !== "on" &&
    networkDenialSeen(stderrTail)
      ? networkDenialText(network)
      : undefined;
  const stopped = ending === "abort" ? "aborted" : status.lost;
  const text = formatBashResult({
    stdout: stdout.tail(),
    stderr: stderrTail,
    truncated,
    ...(locator ? { fullOutputLocator: locator } : {}),
    ...(ending === "timeout" ? { timedOutMs: timeoutMs } : {}),
    ...(stopped ? { stopped } : {}),
    signal: status.signal,
    exitCode: status.exitCode,
    ...(denied ? { sandboxDenied: mode, escalation: exec.approval !== "never" } : {}),
    ...(networkDenied ? { networkDenied } : {}),
  });
  return {
    text,
    details: {
      kind: "command",
      ...(typeof status.exitCode === "number" ? { exitCode: status.exitCode } : {}),
      ...(status.signal ? { signal: status.signal } : {}),
      ...(ending === "timeout" ? { timedOut: true } : {}),
      truncated,
      ...(locator ? { fullOutput: locator } : {}),
      ...(stopped ? { stopped } : {}),
      ...(denied || networkDenied ? { sandboxDenied: true } : {}),
    },
    metadata: {
      exitCode: status.exitCode,
      signal: status.signal,
      sandboxed: running.sandboxed,
      backend: terminal.backend,
      ...(status.lost ? { lost: true } : {}),
    },
  };
}

async function adoptOrKill(
  adopt: (input: {
    owner: string;
    kind: string;
    label: string;
    command: RunningCommand;
    commandLine?: string;
  }) => { id: string },
  exec: ToolExec,
  label: string,
  running: RunningCommand,
  commandLine: string,
): Promise<{ id: string }> {
  try {
    return adopt({ owner: exec.session.sessionId, kind: "bash", label, command: running, commandLine });
  } catch (error) {
    // JobLimitError: the command cannot become a job, so it must not keep running unowned.
    await running.kill();
    throw error;
  }
}

function raceExit(
  running: RunningCommand,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<"exit" | "timeout" | "abort"> {
  return new Promise((resolveRace) => {
    const finish = (how: "exit" | "timeout" | "abort") => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolveRace(how);
    };
    const onAbort = () => finish("abort");
    const timer = setTimeout(() => finish("timeout"), timeoutMs);
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) finish("abort");
    void running.exited.then(() => finish("exit"));
  });
}

async function spillFullOutput(
  exec: ToolExec,
  stdout: StreamCapture,
  stderr: StreamCapture,
): Promise<string | undefined> {
  const blobs = exec.services.get("blobs");
  if (!blobs) return undefined;
  const err = stderr.fullText();
  const full = err === "" ? stdout.fullText() : `${stdout.fullText()}\n[stderr]\n${err}`;
  try {
    const ref = await blobs.putBlob(exec.session.sessionId, full, {
      kind: "bash-output",
      callId: exec.callId,
    });
    const dropped = droppedNotice(ref);
    return dropped ? `${spillLocator(ref.id)} (${dropped})` : spillLocator(ref.id);
  } catch (error) {
    return error instanceof SpillQuotaError ? `unavailable (${error.message})` : undefined;
  }
}
