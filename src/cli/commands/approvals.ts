/**
 * `bdsh approvals list|revoke` (INTERFACE.md): what "always" answers stored, and taking them back.
 *
 * - `list`: one line per exact command approved for a project (`$BDSH_HOME/approvals.json`:
 *   `<id>  <project>  <command>`), then one per pattern key approved in every project, permanently
 *   (`command_allowlist` in `$BDSH_HOME/config.yaml`, seed 000's "allow permanently"). A command is shown
 *   whole on one line, control characters made visible (terminal-text.ts).
 * - `revoke ID|KEY`: removes the exact command whose id (or a unique prefix of it) is ID, else the pattern
 *   key KEY from `command_allowlist` (the rest of config.yaml kept, comments included). Neither: NOT_FOUND,
 *   exit 1.
 *
 * The lists are read from `$BDSH_HOME` only: a project's own config cannot add to or hide from them.
 */
import type { Command } from "commander";
import { readCommandAllowlist, removeFromCommandAllowlist } from "../../config/allowlist.js";
import { CommandApprovals } from "../../config/command-approvals.js";
import { bdshHome } from "../../config/paths.js";
import { CliError, EXIT_FAILED, EXIT_OK } from "../errors.js";
import type { Output } from "../output.js";
import { sanitize } from "../render/terminal-text.js";

export function registerApprovals(
  program: Command,
  output: Output,
  setExitCode: (code: number) => void,
): void {
  const approvals = program
    .command("approvals")
    .description('show or revoke the commands you approved for good ("always" answers)');
  approvals
    .command("list")
    .description("exact commands approved per project, and pattern keys approved in every project")
    .action(() => {
      const home = bdshHome(process.env);
      const commands = new CommandApprovals(home).list();
      const keys = readCommandAllowlist(home);
      if (commands.length === 0 && keys.length === 0) output.err("no stored approvals");
      for (const entry of commands)
        output.out(
          `${entry.id}  ${sanitize(entry.project)}  ${sanitize(entry.command.replace(/\n/g, "\\n"), "show")}`,
        );
      for (const key of keys)
        output.out(`${sanitize(key)}  (every \`${sanitize(key)}\` command, every project)`);
      setExitCode(EXIT_OK);
    });
  approvals
    .command("revoke <id-or-key>")
    .description("remove an exact command by its id, or a pattern key from command_allowlist")
    .action((ref: string) => {
      const home = bdshHome(process.env);
      const gone = new CommandApprovals(home).revoke(ref);
      if (gone)
        output.out(`revoked ${gone.id}  ${sanitize(gone.project)}  ${sanitize(gone.command, "show")}`);
      else if (removeFromCommandAllowlist(home, ref)) output.out(`revoked ${sanitize(ref)} (every project)`);
      else
        throw new CliError(
          "NOT_FOUND",
          `no stored approval ${sanitize(ref)} (\`bdsh approvals list\` shows them)`,
          EXIT_FAILED,
        );
      setExitCode(EXIT_OK);
    });
}
