/**
 * The `bdsh` program. Commands register themselves on one commander program; every failure leaves as
 * one `bdsh: CODE: message` line and an exit code from INTERFACE.md.
 */
import { Command, CommanderError, type Option } from "commander";
import { packageInfo } from "../config/package-root.js";
import { Redactor } from "../log/redact.js";
import { EnvironmentPolicy } from "../tools/terminal/child-env.js";
import { registerApprovals } from "./commands/approvals.js";
import { registerChat } from "./commands/chat.js";
import { registerCompact } from "./commands/compact.js";
import { registerDoctor } from "./commands/doctor.js";
import { registerMcp } from "./commands/mcp.js";
import { registerRun } from "./commands/run.js";
import { registerSchedules } from "./commands/schedules.js";
import { registerServe } from "./commands/serve.js";
import { registerSessions } from "./commands/sessions.js";
import { registerTrust } from "./commands/trust.js";
import { type Routing, routeArgv } from "./default-command.js";
import { describeFailure, EXIT_OK, EXIT_USAGE } from "./errors.js";
import { type Output, processOutput } from "./output.js";
import { sanitize } from "./render/terminal-text.js";
import { addSharedOptions } from "./shared-options.js";
import { registerSpeech } from "./speech.js";

export function buildProgram(output: Output, setExitCode: (code: number) => void): Command {
  const program = addSharedOptions(new Command("bdsh"))
    .description("A durable agent harness: agents that finish the job and survive crashes.")
    .version(packageInfo().version, "-v, --version")
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => output.out(text.trimEnd()),
      writeErr: (text) => output.err(text.trimEnd()),
      outputError: (text, write) => write(`bdsh: USAGE: ${text.replace(/^error: /, "").trim()}`),
    });
  registerRun(program, output, setExitCode);
  registerDoctor(program, output, setExitCode);
  registerChat(program, output, setExitCode);
  registerSessions(program, output, setExitCode);
  registerSchedules(program, output, setExitCode);
  registerCompact(program, output, setExitCode); // C11
  registerServe(program, output, setExitCode);
  registerTrust(program, output, setExitCode);
  registerSpeech(program, output, setExitCode); // `speak`, `run --speak`, `chat --voice`
  registerMcp(program, output, setExitCode);
  registerApprovals(program, output, setExitCode);
  for (const command of program.commands) {
    command.exitOverride();
    for (const sub of command.commands) sub.exitOverride();
  }
  return program;
}

/** What default-command.ts needs to know of the program: its commands, and which options take values. */
function routingOf(program: Command): Routing {
  const flags = (options: readonly Option[]) =>
    options.flatMap((o) => [o.long, o.short].filter((f): f is string => f !== undefined));
  const find = (name: string) => program.commands.find((c) => c.name() === name);
  const runOptions = find("run")?.options ?? [];
  const chatFlags = new Set(flags(find("chat")?.options ?? []));
  return {
    commands: [...program.commands.flatMap((c) => [c.name(), ...c.aliases()]), "help"],
    valueOptions: flags([...program.options, ...runOptions].filter((o) => o.required || o.optional)),
    runOnlyOptions: flags(runOptions).filter((flag) => !chatFlags.has(flag)),
    terminal: process.stdin.isTTY === true && process.stdout.isTTY === true,
  };
}

export async function main(argv: string[], output: Output = processOutput): Promise<number> {
  let exitCode = EXIT_OK;
  const program = buildProgram(output, (code) => {
    exitCode = code;
  });
  try {
    const routed = routeArgv(argv, routingOf(program));
    if ("typo" in routed) {
      output.err(
        `bdsh: USAGE: unknown command "${sanitize(routed.typo)}"; did you mean \`bdsh ${routed.command}\`? (to send it as a task: bdsh chat "${sanitize(routed.typo)}" or bdsh run "${sanitize(routed.typo)}")`,
      );
      return EXIT_USAGE;
    }
    await program.parseAsync(routed.argv, { from: "user" });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT_OK;
      if (error.code === "commander.help") return EXIT_OK;
      return EXIT_USAGE;
    }
    // Redacted with the default policy over this process's environment: config may not have loaded.
    const redactor = Redactor.of(EnvironmentPolicy.default.secretValues(process.env));
    const { line, exitCode: code } = describeFailure(error, redactor);
    output.err(line);
    return code;
  }
}
