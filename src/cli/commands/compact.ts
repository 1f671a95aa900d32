/**
 * `bdsh compact ID` (C11; ID may be a unique prefix): compact an idle session by hand, keeping only the last balanced unit verbatim.
 *
 * Output (stdout, the seed's strings): `No compactable history yet.`, `Compacted N history items (~T tokens).`,
 * or on stderr the busy text (exit 1) when another process is compacting or the agent is running.
 */
import type { Command } from "commander";
import { openAgent } from "../../presets/open-agent.js";
import { cliEnvironment, type GlobalOptions, withStore } from "../environment.js";
import { EXIT_FAILED, EXIT_OK } from "../errors.js";
import type { Output } from "../output.js";
import { sanitize } from "../render/terminal-text.js";
import { findSession, sessionWorkspace } from "../session-select.js";

export function registerCompact(program: Command, output: Output, setExitCode: (code: number) => void): void {
  program
    .command("compact <id>")
    .description("condense an idle session's history into a checkpoint now")
    .action(async (id: string, _options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const environment = cliEnvironment(globals);
      await withStore(environment, async (store) => {
        // ID may be a unique prefix; the session keeps its own workspace.
        const row = await findSession(store, id);
        const workspace = sessionWorkspace(row, globals.cwd !== undefined, environment.cwd, output);
        // A SetupError (no key, unknown provider) exits 2 (cli/errors.ts).
        const opened = await openAgent({
          store,
          config: environment.loaded.config,
          workspace,
          env: environment.env,
          sessionId: row.id,
          home: environment.home,
          approval: "never",
        });
        const outcome = await opened.agent.compactNow();
        if (outcome.kind === "compacted" || outcome.kind === "nothing") {
          output.out(sanitize(outcome.message));
          setExitCode(EXIT_OK);
        } else {
          output.err(
            sanitize(`bdsh: ${outcome.kind === "busy" ? "BUSY" : "COMPACTION_FAILED"}: ${outcome.message}`),
          );
          setExitCode(EXIT_FAILED);
        }
      });
    });
}
