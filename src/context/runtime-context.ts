/**
 * L13, SP4: facts that can change during a session (working directory, file policy, approval policy,
 * delegation) go to the model as a user message, and only when the snapshot differs from the last one
 * still on the surface. The system prompt stays byte-stable, so the provider's prefix cache survives a
 * change of directory or policy (M23).
 *
 * Model experience (our wording of the seed's facts):
 * - `Working directory: "<abs>".`
 * - `File policy: <mode>. …` for read-only, workspace-write and danger-full-access
 * - `Command sandbox: …` (5): whether commands run in bubblewrap, what is read-only,
 *   the session's private temp dir and its path, and the network they may reach (`sandbox_network`);
 *   without bwrap, plainly that there is no OS sandbox
 * - `Approval policy: <ask|never>. …`
 * - the delegated-subagent boundary notice
 * - when every fact vanishes: "Runtime context: none. Earlier runtime-context snapshots no longer apply."
 */
import type { LogEvent } from "../log/events.js";
import type { LogView, Plugin } from "../loop/plugin.js";
import { CONTEXT_ORDER, runtimeContextMessage } from "../loop/prompt.js";
import type {} from "../tools/terminal/environment.js";
import { networkFact, type SandboxNetwork } from "../tools/terminal/sandbox-network.js";

export function workingDirectoryFact(cwd: string): string {
  return `Working directory: ${JSON.stringify(cwd)}.`;
}

export function sandboxFact(mode: string, workspace: string): string {
  switch (mode) {
    case "read-only":
      return "File policy: read-only. Operations checked by the harness's file sandbox cannot change files in this mode. Do not refuse a needed change because of this policy alone: try the tool and follow the denial and escalation guidance it returns.";
    case "workspace-write":
      return `File policy: workspace-write. Operations checked by the harness's file sandbox may change files under the workspace ${JSON.stringify(workspace)}; some temporary directories may be writable too.`;
    default:
      return "File policy: danger-full-access. The harness's file sandbox does not restrict which files may change.";
  }
}

/**
 * What `bash` commands run inside: facts the model needs so a failed write (or connection) is
 * not a mystery. `network` is what the backend applies to sandboxed commands (sandbox-network.ts).
 */
export function commandSandboxFact(
  mode: string,
  osSandbox: boolean,
  tempDir: string | undefined,
  network?: SandboxNetwork,
): string {
  const temp = tempDir
    ? ` Private to this session: the temporary directory ${JSON.stringify(tempDir)} ($TMPDIR), writable in every mode, and removed once no command has used it for a day.`
    : "";
  if (!osSandbox) {
    return `Command sandbox: none. bubblewrap is not available, so commands run WITHOUT an OS sandbox, with this user's full access; only the harness's file-tool checks apply.${temp}`;
  }
  const writable =
    mode === "danger-full-access"
      ? "The whole filesystem is writable."
      : mode === "workspace-write"
        ? 'Only the workspace and the temporary directory below are writable; its .bdsh directory and the git hooks and config stay read-only. Everything else, /tmp included, is read-only: a write there fails with "Read-only file system" and is not kept anywhere.'
        : 'Only the temporary directory below is writable. Everything else, the workspace and /tmp included, is read-only: a write there fails with "Read-only file system".';
  const net = network
    ? ` ${networkFact(mode === "danger-full-access" ? { mode: "on", allow: [] } : network)}`
    : "";
  return `Command sandbox: bash commands run inside bubblewrap, in their own process namespace (the harness's processes are not visible), with the harness's home directory hidden. ${writable}${temp}${net}`;
}

export function approvalFact(policy: string): string {
  if (policy === "never")
    return "Approval policy: never. Operations that need approval are refused automatically; do not ask for sandbox escalation (leave `sandbox_permissions` unset).";
  // S7
  if (policy === "auto")
    return "Approval policy: auto. Operations that need approval are first judged by an automatic reviewer: low-risk ones it accepts run, high-risk ones are always refused, medium-risk ones need the user's explicit consent. A refusal is final for that call; do not repeat the same operation in another form.";
  return "Approval policy: ask. Operations that need approval ask the user through the configured channel; when no channel is available they are refused.";
}

export const DELEGATED_FACT =
  "You are a delegated subagent. Your permissions were fixed when you were started and cannot be widened from inside this session, so operations that need approval are refused. If the task needs more access, do not retry the refused operation: say what is missing in your reply so the delegating agent can handle it.";

/** The last runtime-context snapshot still visible on the surface (a compaction may have hidden it). */
export function lastRetainedSnapshot(log: LogView): string | undefined {
  const nodes = log.surface.surface;
  for (let i = nodes.length - 1; i >= 0; i--) {
    const event: LogEvent | undefined = log.events[nodes[i]!.seq - 1];
    if (event?.type === "user/message" && event.data.source === "runtime-context") return event.data.text;
  }
  return undefined;
}

export const runtimeContextPlugin: Plugin = {
  name: "runtime-context",
  setup(ctx) {
    const facts = ctx.facts;
    ctx.prompt.addContext({
      name: "working-directory",
      order: CONTEXT_ORDER.workingDirectory,
      render: () => workingDirectoryFact(facts.cwd),
    });
    ctx.prompt.addContext({
      name: "sandbox",
      order: CONTEXT_ORDER.sandbox,
      render: () => sandboxFact(facts.sandbox, ctx.workspace),
    });
    // The command-sandbox fact (5) is registered by the plugin that sets up the terminal it describes.
    ctx.prompt.addContext({
      name: "approval",
      order: CONTEXT_ORDER.approval,
      render: () => approvalFact(facts.approval),
    });
    ctx.prompt.addContext({
      name: "delegation",
      order: CONTEXT_ORDER.delegation,
      render: () => (facts.delegated ? DELEGATED_FACT : undefined),
    });
    // The last snapshot on the surface, kept current from the events instead of scanning the surface every
    // step; a replacement (compaction) may hide it, so it is looked up again after one.
    let retained: { text: string | undefined } | undefined;
    ctx.log.onEvents((events) => {
      for (const event of events) {
        if (
          event.type === "user/message" &&
          event.data.source === "runtime-context" &&
          !event.data.surfaceOp
        ) {
          retained = { text: event.data.text };
        } else if ("surfaceOp" in event.data && event.data.surfaceOp) {
          retained = undefined;
        }
      }
    });
    ctx.hooks.onWaterfall(
      "agent/pre-step",
      (state) => {
        retained ??= { text: lastRetainedSnapshot(ctx.log) };
        const text = runtimeContextMessage(ctx.prompt.renderRuntimeContext(), retained.text);
        if (text === undefined) return state;
        return { ...state, messages: [...state.messages, { text, source: "runtime-context" }] };
      },
      { plugin: "runtime-context" },
    );
  },
};
