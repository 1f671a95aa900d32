/**
 * `bdsh chat` (INTERFACE.md): an interactive session in the terminal.
 *
 * - A line typed while the agent is idle starts a turn (follow-up); typed while it runs, it steers the
 *   running turn (L4: next step).
 * - `/goal …` (P6), `/compact` (C11), `/plan` and `/default` (P2), `/help`, `/exit`.
 * - Ctrl-C cancels the running turn (L7); at an idle prompt, Ctrl-C or Ctrl-D leaves.
 * - The reply streams to stdout; tool activity and notices go to stderr.
 */
import { createInterface } from "node:readline";
import { createInterface as createPromptInterface } from "node:readline/promises";
import type { Command } from "commander";
import { projectFiles, trustDirectory } from "../../config/trust.js";
import type { Agent } from "../../loop/agent.js";
import { GOAL_USAGE, parseGoalCommand, runGoalCommand } from "../../planning/goal-command.js";
import { openAgent, SetupError } from "../../presets/open-agent.js";
import {
  type CliEnvironment,
  cliEnvironment,
  type GlobalOptions,
  printStartupWarnings,
  withStore,
} from "../environment.js";
import { CliError, EXIT_OK, EXIT_USAGE } from "../errors.js";
import type { Output } from "../output.js";
import { chooseSession, showConversationTail } from "../session-select.js";
import { addSharedOptions } from "../shared-options.js";
import { terminalApprovals, terminalQuestions } from "../terminal-approvals.js";
import { humanView } from "./run.js";

const HELP = [
  "Type a message to send it. While the agent works, a message steers the running turn.",
  "/goal [<objective>|clear|edit <objective>|pause|resume]   goal rounds (P6)",
  "/compact                                                  condense the history (C11)",
  "/plan, /default                                           switch plan mode (P2)",
  "/exit                                                     leave (Ctrl-C cancels a running turn)",
].join("\n");

export function registerChat(program: Command, output: Output, setExitCode: (code: number) => void): void {
  addSharedOptions(program.command("chat").description("interactive session in the terminal"))
    .option("--session <id>", "continue an existing session (a unique id prefix is enough)")
    .action(async (options: { session?: string }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      let environment = cliEnvironment(globals);
      if (await askToTrust(environment, output)) environment = cliEnvironment(globals);
      printStartupWarnings(environment, output);
      await withStore(environment, async (store) => {
        const chosen = await chooseSession(store, { ...globals, ...options }, environment.cwd, output); // issue 15
        let agent: Agent;
        try {
          ({ agent } = await openAgent({
            store,
            config: environment.loaded.config,
            workspace: chosen.workspace,
            home: environment.home,
            env: environment.env,
            ...(chosen.row ? { sessionId: chosen.row.id } : {}),
            toolOptions: {
              home: environment.home,
              env: environment.env,
              approvals: terminalApprovals,
              questionAnswerer: terminalQuestions,
            },
            leaseWaitMs: 30_000,
          }));
        } catch (error) {
          if (error instanceof SetupError) throw new CliError(error.code, error.message, EXIT_USAGE);
          throw error;
        }
        if (chosen.row) await showConversationTail(agent, output); // issue 15: not replayed
        output.err(`session ${agent.sessionId} — /help for commands`);
        await chatLoop(agent, output);
        await agent.close();
        setExitCode(EXIT_OK);
      });
    });
}

/**
 * Issue 14: an untrusted workspace that carries project files asks once, at a terminal, whether to trust it
 * (Claude Code's folder-trust question). Only "y" or "yes" trusts; anything else keeps it untrusted.
 * Returns whether the directory was trusted now (the configuration is then loaded again).
 */
async function askToTrust(environment: CliEnvironment, output: Output): Promise<boolean> {
  const { project } = environment.loaded;
  if (project.trusted || !process.stdin.isTTY) return false;
  const files = projectFiles(project.dir);
  if (files.length === 0) return false;
  const ask = createPromptInterface({ input: process.stdin, output: process.stderr });
  try {
    output.err(`${project.dir} carries project files: ${files.join(", ")}.`);
    output.err("They load only in a trusted directory; plugins run code with your permissions.");
    const answer = await ask.question("Trust this directory? [y/N] ");
    if (!/^(y|yes)$/i.test(answer.trim())) return false;
  } finally {
    ask.close();
  }
  output.err(`trusted ${trustDirectory(environment.home, project.dir)}`);
  return true;
}

async function chatLoop(agent: Agent, output: Output): Promise<void> {
  const view = humanView(output);
  agent.log.onDurable(view.events);
  agent.onDelta((delta) => view.delta(delta.type, delta.delta));
  agent.hooks.onSerial("agent/turn-end", () => view.finish());
  agent.hooks.onSerial("agent/status", (event) => {
    if (event.status === "idle") rl.prompt();
  });
  agent.open().catch(() => undefined);
  const rl = createInterface({ input: process.stdin, output: process.stderr, prompt: "> " });
  rl.prompt();
  rl.on("SIGINT", () => {
    if (agent.status === "running") {
      output.err("cancelling the turn…");
      void agent.cancel();
    } else rl.close();
  });
  for await (const raw of rl) {
    const line = raw.trim();
    if (!line) {
      rl.prompt();
      continue;
    }
    if (line === "/exit" || line === "/quit") break;
    const reply = await command(agent, line);
    if (reply !== undefined) {
      output.err(reply);
      if (agent.status !== "running") rl.prompt();
      continue;
    }
    if (agent.status === "running") await agent.steer(line);
    else await agent.followup(line);
  }
  await agent.whenIdle().catch(() => undefined);
}

/** A slash command's answer, or undefined when the line is a message for the model. */
async function command(agent: Agent, line: string): Promise<string | undefined> {
  if (!line.startsWith("/")) return undefined;
  if (line === "/help") return HELP;
  if (line === "/compact") {
    if (agent.status === "running") return "Compaction is unavailable while the agent is running.";
    const compaction = agent.services.get("compaction");
    return compaction
      ? (await compaction.compactNow()).message
      : "Compaction is not available in this preset.";
  }
  if (line === "/plan" || line === "/default") {
    const plan = agent.services.get("planMode");
    if (!plan) return "Plan mode is not available in this preset.";
    await plan.switchTo(line === "/plan" ? "plan" : "default");
    return line === "/plan" ? "Plan mode on." : "Back to the default mode.";
  }
  const goal = parseGoalCommand(line);
  if (goal) {
    const goals = agent.services.get("goalService");
    const rounds = agent.services.get("goalRounds");
    if (!goals || !rounds) return "Goals are not available in this preset.";
    return runGoalCommand(goal, {
      goals,
      queueRound: () => rounds.queueRound(),
      kick: () => agent.kick(),
      idle: agent.status === "idle",
    });
  }
  return `Unknown command ${line.split(" ")[0]}. ${GOAL_USAGE.replace("Usage: ", "Try /help, or ")}`;
}
