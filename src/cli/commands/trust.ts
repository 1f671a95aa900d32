/**
 * `bdsh trust [DIR]` (INTERFACE.md): trust a project directory, so its `./.bdsh/config.yaml`,
 * `./.bdsh/plugins`, `./.bdsh/skills` and instruction files load. Trust never lets a project's config loosen
 * a security key (src/config/security-keys.ts). `--list` shows the trusted directories; `--revoke DIR`
 * removes one.
 *
 * Instruction review (SECURITY.md row 1d): trusting, and `--accept-instructions` for a directory already
 * trusted, first shows each instruction file and skill that is new or changed since a person accepted it
 * (the whole file, or a diff) and asks; only then are their digests recorded. Without a terminal it refuses
 * unless `--yes` says the person accepts what is printed.
 *
 * stdout: `trusted <real path>`, then `accepted <n> file(s) in <root>` when files were accepted (always with
 * `--accept-instructions`) / `revoked <path>` / one trusted directory per line.
 */
import type { Command } from "commander";
import { projectInstructionFiles } from "../../config/instruction-files.js";
import { type PendingFile, pendingInstructions } from "../../config/instruction-review.js";
import {
  acceptInstructions,
  projectFiles,
  readTrustList,
  realDirectory,
  revokeTrust,
  TrustFileError,
  trustDirectory,
  trustedRoot,
} from "../../config/trust.js";
import { type CliEnvironment, cliEnvironment, type GlobalOptions } from "../environment.js";
import { CliError, EXIT_FAILED, EXIT_OK, EXIT_USAGE, usageError } from "../errors.js";
import { confirm, showPending } from "../instruction-review.js";
import type { Output } from "../output.js";

type TrustOptions = { list?: boolean; revoke?: boolean; acceptInstructions?: boolean; yes?: boolean };

export function registerTrust(program: Command, output: Output, setExitCode: (code: number) => void): void {
  program
    .command("trust [dir]")
    .description("trust a project directory: its ./.bdsh config, plugins and skills and AGENTS.md load")
    .option("--list", "list the trusted directories")
    .option("--revoke", "stop trusting DIR")
    .option(
      "--accept-instructions",
      "review and accept the new or changed instruction files and skills of the trusted directory covering DIR",
    )
    .option("--yes", "accept the files shown without asking (needed without a terminal)")
    .action(async (dir: string | undefined, options: TrustOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const environment = cliEnvironment({ ...globals, ...(dir ? { cwd: dir } : {}) });
      try {
        if (options.list) {
          for (const entry of readTrustList(environment.home).directories)
            output.out(`${entry.path}${entry.trustedAt ? `  (since ${entry.trustedAt})` : ""}`);
        } else if (options.revoke) {
          if (!revokeTrust(environment.home, environment.cwd))
            throw usageError(`${environment.cwd} is not in the trust list`);
          output.out(`revoked ${environment.cwd}`);
        } else await trustAndReview(environment, options, output);
      } catch (error) {
        if (error instanceof TrustFileError) throw new CliError("TRUST", error.message, EXIT_USAGE);
        throw error;
      }
      setExitCode(EXIT_OK);
    });
}

async function trustAndReview(environment: CliEnvironment, options: TrustOptions, output: Output) {
  const { home, cwd } = environment;
  const covering = trustedRoot(home, cwd);
  if (options.acceptInstructions && covering === undefined)
    throw usageError(`${cwd} is not trusted: run \`bdsh trust\` to trust it (its files are shown first)`);
  // `--accept-instructions` reviews the directory whose files load (the nearest trusted one); plain
  // `bdsh trust DIR` trusts DIR itself, or reviews it when it is trusted already.
  const root = options.acceptInstructions ? covering! : realDirectory(cwd);
  const known = readTrustList(home).directories.some((entry) => entry.path === root);
  const review = known
    ? pendingInstructions(home, root, cwd)
    : { pending: newFiles(root, cwd), present: projectInstructionFiles(root, cwd) };
  const { pending, present } = review;
  if (pending.length > 0) {
    showPending(pending, output);
    await askToAccept(pending.length, options.yes === true);
  }
  if (!known) {
    trustDirectory(home, root, { files: present });
    output.out(`trusted ${root}`);
    const files = projectFiles(root);
    if (files.length) output.err(`these now load: ${files.join(", ")}`);
    return;
  }
  // Recorded even when nothing was pending: an entry from before review then counts as reviewed.
  acceptInstructions(
    home,
    root,
    pending,
    present.map((file) => file.name),
  );
  if (!options.acceptInstructions) output.out(`trusted ${root}`);
  if (pending.length || options.acceptInstructions)
    output.out(`accepted ${pending.length} file(s) in ${root}`);
}

function newFiles(root: string, cwd: string): PendingFile[] {
  return projectInstructionFiles(root, cwd).map((file) => ({ ...file, verdict: "new" as const }));
}

/** Throws unless the person accepts (at a terminal) or `--yes` was given. */
async function askToAccept(count: number, yes: boolean): Promise<void> {
  if (yes) return;
  if (!process.stdin.isTTY)
    throw new CliError(
      "REVIEW",
      `${count} instruction file(s) above wait for review and nobody can be asked here: run this at a terminal, or add --yes to accept them as shown; nothing was recorded`,
      EXIT_USAGE,
    );
  if (!(await confirm(`Accept these ${count} file(s)? They will instruct the agent. [y/N] `)))
    throw new CliError("DECLINED", "not accepted: nothing was recorded", EXIT_FAILED);
}
