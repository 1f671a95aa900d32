/**
 * The git-repair plugin (SECURITY.md rows 10g–10i): around every command (a tool of the `terminal` toolset) run on
 * this host under `workspace-write`, a snapshot of git's control files before and a check after
 * (git-control-check.ts). A `tools/execute` wrapper, so the loop has no branch for it.
 *
 * Invariants:
 * - Only commands are checked: the file tools refuse git's control paths themselves (protected-paths.ts).
 *   Remote backends (their files are not this host's) and the other sandbox modes are left alone:
 *   `read-only` cannot write, `danger-full-access` was given everything.
 * - Each repair is one `sandbox/git-repaired` event (the user: `bdsh run` and `bdsh chat` print it) and
 *   a paragraph appended to the command's result (the model).
 * - A check that fails (a file vanished mid-way, a rename refused) is reported in the result, never
 *   thrown: the command's own output is kept.
 *
 * Model experience, appended to the command's result:
 *   "[sandbox: git settings that run programs were removed from <path> (core.fsmonitor); the original is
 *   kept at <path>.bdsh-quarantine. Ask the user to set such settings themselves.]"
 *   "[sandbox: <path> was moved aside to <quarantine>: it would make git run a program. …]"
 */
import type { Plugin } from "../../loop/plugin.js";
import type { ToolOutput } from "../../tools/types.js";
import { type GitRepair, repairGitControl, snapshotGitControl } from "./git-control-check.js";

export function repairText(repair: GitRepair): string {
  const settings = repair.settings.length > 0 ? ` (${repair.settings.join(", ")})` : "";
  return repair.action === "settings-removed"
    ? `[sandbox: git settings that run programs were removed from ${repair.path}${settings}; the original is kept at ${repair.quarantine}. Ask the user to set such settings themselves.]`
    : `[sandbox: ${repair.path} was moved aside to ${repair.quarantine}${settings}: it would make git run a program. Ask the user to set it up themselves.]`;
}

function withNote(output: ToolOutput, note: string): ToolOutput {
  return { ...output, text: output.text === "" ? note : `${output.text}\n\n${note}` };
}

export function gitRepairPlugin(): Plugin {
  return {
    name: "git-repair",
    setup(ctx) {
      ctx.hooks.onWrap(
        "tools/execute",
        async (input, next) => {
          const { tool, exec } = input;
          const local = exec.services.get("terminal")?.files === undefined;
          if (tool.toolset !== "terminal" || exec.sandbox !== "workspace-write" || !local) return next(input);
          const before = snapshotGitControl(exec.workspace);
          const output = await next(input);
          let repairs: GitRepair[];
          try {
            repairs = repairGitControl(before.workspace, before, snapshotGitControl(exec.workspace));
          } catch (error) {
            const reason = error instanceof Error ? error.message : String(error);
            return withNote(output, `[sandbox: the check of git's control files failed: ${reason}]`);
          }
          if (repairs.length === 0) return output;
          ctx.log.add({ type: "sandbox/git-repaired", data: { callId: exec.callId, repairs } });
          return withNote(output, repairs.map(repairText).join("\n"));
        },
        { plugin: "git-repair" },
      );
    },
  };
}
