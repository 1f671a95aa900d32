import type { Command } from "commander";

/** How `run`, `chat` and `resume` name the session to continue (session-select.ts). */
export type SessionFlags = { session?: string; continue?: boolean; last?: boolean };

/** Options every command accepts, before or after its name (INTERFACE "Options shared by run, chat and resume"). */
export function addSharedOptions(command: Command): Command {
  return command
    .option("--cwd <dir>", "the workspace (default: the current directory)")
    .option("--config <file>", "an extra config file, applied last among files")
    .option("--provider <name>", "model provider preset")
    .option("--base-url <url>", "override the preset's endpoint")
    .option("--model <id>", "model id sent on the wire")
    .option("--effort <level>", "reasoning effort: off, low, high, max")
    .option("--sandbox <mode>", "read-only, workspace-write or danger-full-access")
    .option(
      "--sandbox-network <mode>",
      "off, proxy or on: what sandboxed commands may reach on the network (default off)",
    )
    .option(
      "--approval <policy>",
      "ask, never or auto (auto: the session's model reviews each approval first)",
    )
    .option("--continue", "continue the newest session of this workspace")
    .option("--last", "the same as --continue");
}
