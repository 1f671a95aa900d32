/**
 * `working_directory` (T22): read the session's working directory, or move it to another directory inside
 * the workspace. The cwd is state in the log (`session/cwd`), not memory, so it survives a crash, a resume
 * and a takeover by another server; the runtime context (SP4, ./runtime-context.ts) reports it from
 * `facts.cwd`, which this plugin keeps equal to the log's last `session/cwd`.
 *
 * Invariants:
 * - A change goes only into an existing directory whose real path lies in the workspace's real path, never
 *   into the harness's home folder (workspace-paths.ts: `..` and symlinks are resolved first). This holds in
 *   every sandbox mode: the tool moves where commands start, not what they may touch.
 * - The sandbox's writable roots stay the workspace (the file sandbox and bubblewrap read `exec.workspace`,
 *   never the cwd), so a change widens nothing.
 * - The event is flushed before the tool answers: a model told "changed" never resumes in the old directory.
 *   The call is exclusive (L19), so the calls after it in the same batch run in the new directory.
 * - On load, the last recorded cwd wins: a `session/cwd`, or `session/start.cwd` (a subagent starts in its
 *   parent's directory). One that is gone or outside the current workspace (a session continued with
 *   another `--cwd`) is not used: the workspace is.
 * - Not offered on a terminal backend with its own files (SSH, containers with a remote cwd): their working
 *   directory is the remote side's.
 *
 * Model experience (the SP4 strings exact):
 * - `Current working directory: "<abs>".` (read, or a move to where it already is)
 * - `The working directory changed from "<a>" to "<b>".`
 * - `Error: cannot change the working directory to "<p>": not found` / `not a directory` /
 *   `outside the workspace "<ws>"` / `the harness's home folder is not available to tools`
 */
import { realpathSync, statSync } from "node:fs";
import { stat } from "node:fs/promises";
import type { LogEvent } from "../log/events.js";
import type { Plugin, PluginContext } from "../loop/plugin.js";
import { isWithin } from "../tools/files/path-within.js";
import { realPathOf } from "../tools/files/sandbox-paths.js";
import { workspacePath } from "../tools/files/workspace-paths.js";
import { type Static, Type, toolParameters } from "../tools/schema.js";
import type {} from "../tools/terminal/environment.js";
import type { ToolDefinition } from "../tools/types.js";

export const currentDirectoryText = (cwd: string) => `Current working directory: ${JSON.stringify(cwd)}.`;
export const changedDirectoryText = (from: string, to: string) =>
  `The working directory changed from ${JSON.stringify(from)} to ${JSON.stringify(to)}.`;

/** The cwd an event records: a move, or where the session started (a subagent starts in its parent's). */
function recordedCwd(event: LogEvent): string | undefined {
  if (event.type === "session/cwd") return event.data.cwd;
  if (event.type === "session/start") return event.data.cwd;
  return undefined;
}

/** `cwd` when it can still be used: an existing directory whose real path is under the workspace's. */
function usable(cwd: string, workspace: string): string | undefined {
  try {
    const real = realpathSync(cwd);
    return isWithin(realpathSync(workspace), real) && statSync(real).isDirectory() ? cwd : undefined;
  } catch {
    return undefined;
  }
}

const WorkingDirectorySchema = Type.Object(
  {
    path: Type.Optional(
      Type.String({
        minLength: 1,
        description: "The directory to move to. Leave it out to only show the current one.",
      }),
    ),
  },
  { additionalProperties: false },
);

export function workingDirectoryTool(
  ctx: PluginContext,
): ToolDefinition<Static<typeof WorkingDirectorySchema>> {
  return {
    name: "working_directory",
    toolset: "files",
    description:
      "Show the working directory, or change it by giving `path`: a directory inside the workspace (absolute, or relative to the current one). Commands and relative paths of later calls start there. It does not change which files may be written.",
    parameters: toolParameters(WorkingDirectorySchema),
    isAvailable: ({ services }) => {
      const terminal = services.get("terminal");
      return terminal === undefined || (terminal.remoteCwd === undefined && terminal.files === undefined);
    },
    concurrency: (args) => (args.path === undefined ? "safe" : "exclusive"),
    readOnly: (args) => args.path === undefined,
    async execute(args, exec) {
      const from = ctx.facts.cwd;
      if (args.path === undefined) return { text: currentDirectoryText(from) };
      const target = await workspacePath(exec, args.path);
      const refuse = (why: string) =>
        new Error(`cannot change the working directory to "${target.shown}": ${why}`);
      if (!target.ok) throw refuse(target.refusal);
      const info = await stat(target.real).catch(() => undefined);
      if (!info) throw refuse("not found");
      if (!info.isDirectory()) throw refuse("not a directory");
      if (target.real === (await realPathOf(from))) return { text: currentDirectoryText(from) };
      ctx.log.add({ type: "session/cwd", data: { cwd: target.real, previous: from } });
      await ctx.log.flush(); // durable before the model is told (and before any command runs there)
      return { text: changedDirectoryText(from, target.real) };
    },
  };
}

export function workingDirectoryPlugin(): Plugin {
  return {
    name: "working-directory",
    setup(ctx) {
      // facts.cwd follows the log: loaded events (open, resume, takeover) and this agent's own additions.
      ctx.log.onEvents((events) => {
        let last: string | undefined;
        for (const event of events) last = recordedCwd(event) ?? last;
        if (last !== undefined) ctx.facts.cwd = usable(last, ctx.workspace) ?? ctx.workspace;
      });
      ctx.tools.register(workingDirectoryTool(ctx), { source: "working-directory" });
    },
  };
}
