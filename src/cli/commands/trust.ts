/**
 * `bdsh trust [DIR]` (INTERFACE.md, issue 14): trust a project directory, so its `./.bdsh/config.yaml`,
 * `./.bdsh/plugins`, `./.bdsh/skills` and instruction files load. Trust never lets a project's config loosen
 * a security key (src/config/security-keys.ts). `--list` shows the trusted directories; `--revoke DIR`
 * removes one.
 *
 * stdout: `trusted <real path>` / `revoked <path>` / one trusted directory per line.
 */
import type { Command } from "commander";
import {
  projectFiles,
  readTrustList,
  revokeTrust,
  TrustFileError,
  trustDirectory,
} from "../../config/trust.js";
import { cliEnvironment, type GlobalOptions } from "../environment.js";
import { CliError, EXIT_OK, EXIT_USAGE, usageError } from "../errors.js";
import type { Output } from "../output.js";

export function registerTrust(program: Command, output: Output, setExitCode: (code: number) => void): void {
  program
    .command("trust [dir]")
    .description("trust a project directory: its ./.bdsh config, plugins and skills and AGENTS.md load")
    .option("--list", "list the trusted directories")
    .option("--revoke", "stop trusting DIR")
    .action(
      async (dir: string | undefined, options: { list?: boolean; revoke?: boolean }, command: Command) => {
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
          } else {
            const path = trustDirectory(environment.home, environment.cwd);
            const files = projectFiles(path);
            output.out(`trusted ${path}`);
            if (files.length) output.err(`these now load: ${files.join(", ")}`);
          }
        } catch (error) {
          if (error instanceof TrustFileError) throw new CliError("TRUST", error.message, EXIT_USAGE);
          throw error;
        }
        setExitCode(EXIT_OK);
      },
    );
}
