/**
 * `bdsh chat [PROMPT…]` (INTERFACE.md): an interactive session in the terminal; PROMPT, when
 * given, is sent as the first message (`bdsh "task"` on a terminal is `bdsh chat "task"`, default-command.ts).
 *
 * - On a terminal (stdin and stdout both TTYs): the Ink UI (src/cli/chat/chat-tui.ts) — a transcript with
 *   markdown and tool cards, a status line, a multi-line editor with bracketed paste and per-project
 *   history, modal approvals, Esc/Ctrl-C to interrupt (L7), slash commands (src/cli/chat/slash-commands.ts).
 * - Otherwise plain lines (src/cli/chat/plain-chat.ts): a line is a message; nobody can be asked, so
 *   approvals fail closed as in a headless run.
 */
import type { Command } from "commander";
import { addToCommandAllowlist } from "../../config/allowlist.js";
import { CommandApprovals } from "../../config/command-approvals.js";
import { projectInstructionFiles } from "../../config/instruction-files.js";
import { pendingInstructions } from "../../config/instruction-review.js";
import { acceptInstructions, projectFiles, trustDirectory } from "../../config/trust.js";
import { openAgent } from "../../presets/open-agent.js";
import type { Approvals } from "../../tools/approvals.js";
import type { QuestionAnswerer } from "../../tools/interaction/ask-user-tool.js";
import { historyFile } from "../chat/history.js";
import { runPlainChat } from "../chat/plain-chat.js";
import {
  type CliEnvironment,
  cliEnvironment,
  type GlobalOptions,
  printStartupWarnings,
  withStore,
} from "../environment.js";
import { EXIT_OK, usageError } from "../errors.js";
import { confirm, pendingWarnings, showPending } from "../instruction-review.js";
import type { Output } from "../output.js";
import { pickSession } from "../session-picker.js";
import { chooseSession } from "../session-select.js";
import { addSharedOptions, type SessionFlags } from "../shared-options.js";
import { speakAgentReplies } from "../speech.js";

export function registerChat(program: Command, output: Output, setExitCode: (code: number) => void): void {
  addSharedOptions(program.command("chat").description("interactive session in the terminal"))
    .option("--session <id>", "continue an existing session (its short id or a unique prefix is enough)")
    .argument("[prompt...]", "a first message to send as chat opens")
    .action(async (words: string[], options: { session?: string }, command: Command) => {
      await openChat(command.optsWithGlobals<GlobalOptions>(), options, words.join(" ").trim(), output);
      setExitCode(EXIT_OK);
    });
  // `bdsh resume [ID]`: chat in that session; without an id, a picker of this workspace's sessions.
  addSharedOptions(
    program
      .command("resume")
      .description("continue a session in chat; without an id, pick one of this workspace's"),
  )
    .argument("[id]", "the session (its short id or a unique prefix)")
    .action(async (id: string | undefined, _options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions & SessionFlags>();
      if (globals.continue || globals.last) throw usageError("resume takes the session as its ID argument");
      let session = id;
      if (session === undefined) {
        if (!process.stdin.isTTY) throw usageError("give the session's id (`bdsh sessions list` shows them)");
        const environment = cliEnvironment(globals);
        session = (await withStore(environment, (store) => pickSession(store, environment.cwd, output))).id;
      }
      await openChat(globals, { session }, "", output);
      setExitCode(EXIT_OK);
    });
}

async function openChat(
  globals: GlobalOptions,
  options: { session?: string },
  firstMessage: string,
  output: Output,
): Promise<void> {
  let environment = cliEnvironment(globals);
  if (await askToTrust(environment, output)) environment = cliEnvironment(globals);
  await reviewInstructions(environment, output);
  printStartupWarnings(environment, output);
  await withStore(environment, async (store) => {
    const chosen = await chooseSession(store, { ...globals, ...options }, environment.cwd, output); // a prefix, --last or --continue
    const config = environment.loaded.config;
    const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true;
    const base = {
      store,
      home: environment.home,
      env: environment.env,
      workspace: chosen.workspace,
      leaseWaitMs: 30_000,
      // Without a terminal nobody can be asked (INTERFACE: behaves as never); `auto` still reviews (S7).
      ...(interactive || config.approval === "auto" ? {} : { approval: "never" as const }),
    };
    const toolOptions = {
      home: environment.home,
      env: environment.env,
      persistAllowlist: (key: string) => addToCommandAllowlist(environment.home, key),
      exactCommands: new CommandApprovals(environment.home),
      onPluginFailure: (failure: { name: string; path: string; error: string }) =>
        output.err(`bdsh: PLUGIN: ${failure.name} (${failure.path}): ${failure.error}`),
    };
    // M5: an effort given for this chat (`--effort`, BDSH_EFFORT, or picked with /model) wins over the session's.
    const effortGiven = globals.effort !== undefined || !!environment.env.BDSH_EFFORT;
    const open = async (o: {
      sessionId?: string;
      config: typeof config;
      effortExplicit?: boolean;
      approvals?: Approvals;
      questions?: QuestionAnswerer;
    }) => {
      // A SetupError (no key, unknown provider) exits 2 (cli/errors.ts).
      const { agent } = await openAgent({
        ...base,
        config: o.config,
        effortExplicit: effortGiven || o.effortExplicit === true,
        ...(o.sessionId ? { sessionId: o.sessionId } : {}),
        toolOptions: {
          ...toolOptions,
          ...(o.approvals ? { approvals: o.approvals } : {}),
          ...(o.questions ? { questionAnswerer: o.questions } : {}),
        },
      });
      speakAgentReplies(agent, options, { config: o.config, env: environment.env, output }); // --voice: each reply spoken
      return agent;
    };
    const common = {
      store,
      config,
      workspace: chosen.workspace,
      env: environment.env,
      ...(chosen.row ? { sessionId: chosen.row.id } : {}),
      ...(firstMessage ? { firstMessage } : {}),
    };
    if (interactive) {
      // Ink and React load only for the terminal UI, not with every command.
      const { runChatTui } = await (await import("../chat/load-tui.js")).loadChatTui();
      await runChatTui({ ...common, open, historyFile: historyFile(environment.home, chosen.workspace) });
    } else await runPlainChat({ ...common, open, output });
  });
}

/**
 * An untrusted workspace that carries project files asks once, at a terminal, whether to trust it
 * (Claude Code's folder-trust question). Only "y" or "yes" trusts; anything else keeps it untrusted.
 * Returns whether the directory was trusted now (the configuration is then loaded again).
 */
async function askToTrust(environment: CliEnvironment, output: Output): Promise<boolean> {
  const { project } = environment.loaded;
  if (project.trusted || !process.stdin.isTTY) return false;
  const files = projectFiles(project.dir);
  if (files.length === 0) return false;
  // Row 1d: the instruction files and skills are shown whole; trusting accepts exactly what was shown.
  const shown = projectInstructionFiles(project.dir, environment.cwd);
  showPending(
    shown.map((file) => ({ ...file, verdict: "new" as const })),
    output,
  );
  output.err(`${project.dir} carries project files: ${files.join(", ")}.`);
  output.err("They load only in a trusted directory; plugins run code with your permissions.");
  if (!(await confirm("Trust this directory? [y/N] "))) return false;
  output.err(`trusted ${trustDirectory(environment.home, project.dir, { files: shown })}`);
  return true;
}

/**
 * Row 1d: a trusted project's instruction files and skills that are new or changed since a person accepted
 * them are shown at start, on a terminal, with the choice to accept them (recorded, as `bdsh trust
 * --accept-instructions` does) or to skip them for this run. Skipped, or without a terminal, each is named
 * in a warning and left out.
 */
async function reviewInstructions(environment: CliEnvironment, output: Output): Promise<void> {
  const { project } = environment.loaded;
  if (!project.trusted) return;
  const { pending, present } = pendingInstructions(environment.home, project.root, environment.cwd);
  if (pending.length === 0) return;
  if (process.stdin.isTTY) {
    showPending(pending, output);
    const question = `Accept these ${pending.length} instruction file(s) for this and later runs? y accepts, N skips them for this run [y/N] `;
    if (await confirm(question)) {
      acceptInstructions(
        environment.home,
        project.root,
        pending,
        present.map((file) => file.name),
      );
      output.err(`accepted ${pending.length} file(s) in ${project.root}`);
      return;
    }
  }
  for (const line of pendingWarnings(pending)) output.err(line);
}
