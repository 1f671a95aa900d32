/**
 * `bdsh run [options] PROMPT` (INTERFACE.md, L16): one headless task. The human view streams the reply to
 * stdout and tool activity to stderr; `--json` prints every durable event as one JSON line instead, from
 * the session's first event. Exit 0 only when the last turn ended `completed`.
 *
 * `bdsh sessions resume ID [PROMPT]` is the same with `--session ID`; without a prompt it repairs an
 * interrupted turn (R1) and stops.
 */

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, extname, resolve } from "node:path";
import type { Command } from "commander";
import { addToCommandAllowlist } from "../../config/allowlist.js";
import { CommandApprovals } from "../../config/command-approvals.js";
import { saveAttachment, withAttachments } from "../../context/attachments.js";
import type { LogEvent } from "../../log/events.js";
import { eventJson } from "../../log/serialize.js";
import { requestUsage, usageOf } from "../../log/usage.js";
import { runHeadless } from "../../loop/headless.js";
import { MAX_IMAGE_BYTES, sniffImageType } from "../../model/images.js";
import { costOf, priceFromConfig } from "../../model/pricing.js";
import { armGoal, goalOutcome } from "../../planning/goal-run.js";
import { openAgent } from "../../presets/open-agent.js";
import { startOtlpTracing } from "../../telemetry/otlp-export.js";
import { cliEnvironment, type GlobalOptions, printStartupWarnings, withStore } from "../environment.js";
import { CliError, EXIT_USAGE, usageError } from "../errors.js";
import { warnWithheld } from "../instruction-review.js";
import { type Output, onBrokenPipe } from "../output.js";
import { sanitize } from "../render/terminal-text.js";
import { jsonView, RunView, type View } from "../run-view.js";
import { chooseSession, showConversationTail } from "../session-select.js";
import { addSharedOptions } from "../shared-options.js";
import { speakAgentReplies } from "../speech.js";
import { type PromptHold, terminalPrompts } from "../terminal-approvals.js";
import { runRalphCommand } from "./ralph-run.js";

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

const IMAGE_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

/**
 * M10: the prompt with each attached file saved as a read-only copy and described by its handle. An image
 * is what its bytes say; a file named as an image that is not one, or an image over the size limit, is
 * refused here rather than sent as a surprise.
 */
function promptWithAttachments(prompt: string, files: readonly string[], home: string, cwd: string): string {
  const attachments = files.map((file) => {
    const path = resolve(cwd, file);
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch (error) {
      throw new CliError("USAGE", `cannot attach ${file}: ${(error as Error).message}`, EXIT_USAGE);
    }
    const mediaType = sniffImageType(data);
    if (mediaType === undefined && IMAGE_TYPES[extname(path).toLowerCase()] !== undefined) {
      throw new CliError("USAGE", `cannot attach ${file}: not a PNG, JPEG, GIF or WebP image`, EXIT_USAGE);
    }
    if (mediaType !== undefined && data.byteLength > MAX_IMAGE_BYTES) {
      throw new CliError(
        "USAGE",
        `cannot attach ${file}: ${data.byteLength} bytes is over the ${MAX_IMAGE_BYTES}-byte image limit`,
        EXIT_USAGE,
      );
    }
    return saveAttachment(home, basename(path), data, mediaType ?? "application/octet-stream");
  });
  return withAttachments(prompt, attachments);
}

export type RunOptions = {
  json?: boolean;
  session?: string;
  record?: string;
  replay?: string;
  apiKeyEnv?: string;
  /** P3–P5: the prompt is a goal's objective; rounds continue until it is complete. */
  goal?: boolean;
  /** P7: the prompt is the objective of a Ralph loop. */
  ralph?: boolean;
  /** M10: files attached to the prompt as read-only copies. */
  attach?: string[];
  /** Only the final answer on stdout (for scripts and pipes). */
  quiet?: boolean;
  /** Also write the final answer to this file. */
  outputLastMessage?: string;
};

export function addRunOptions(command: Command): Command {
  return addSharedOptions(command)
    .option("--json", "print the session's durable events as JSON Lines")
    .option("--session <id>", "continue an existing session (a unique id prefix is enough)")
    .option("--record <file>", "save each raw provider exchange to FILE (JSON Lines)")
    .option("--replay <file>", "play a recording back instead of calling a provider")
    .option("--api-key-env <var>", "read the API key from VAR")
    .option(
      "--attach <file>",
      "attach a file (repeatable): saved as a read-only copy; an image is shown to models that take images, other files by path",
      collect,
      [],
    )
    .option("-q, --quiet", "print only the final answer on stdout, nothing else")
    .option("--output-last-message <file>", "also write the final answer to FILE")
    .option("--goal", "treat the prompt as a goal's objective and keep working in goal rounds")
    .option("--ralph", "run the prompt as a Ralph loop: a fresh worker per round, the workspace as memory");
}

export function registerRun(program: Command, output: Output, setExitCode: (code: number) => void): void {
  addRunOptions(program.command("run").description("run one task headless until the agent is done"))
    .argument("<prompt...>", "the task; `-` reads it from standard input")
    .action(async (words: string[], options: RunOptions, command: Command) => {
      // `bdsh run -` reads the prompt from stdin (INTERFACE.md).
      const prompt = words.length === 1 && words[0] === "-" ? readFileSync(0, "utf8") : words.join(" ");
      setExitCode(
        await runCommand(prompt, options, command.optsWithGlobals<GlobalOptions & RunOptions>(), output),
      );
    });
}

export async function runCommand(
  prompt: string | undefined,
  options: RunOptions,
  globals: GlobalOptions,
  output: Output,
): Promise<number> {
  // A usage error costs no model call: nothing is sent for an empty prompt or a missing recording (exit 2).
  if (prompt !== undefined && prompt.trim() === "") throw usageError("the prompt is empty");
  if (options.replay && !existsSync(options.replay))
    throw usageError(`--replay ${options.replay}: no such file`);
  const replayFlags = options.replay ? { ...globals, provider: "replay" } : globals;
  const environment = cliEnvironment(replayFlags);
  printStartupWarnings(environment, output);
  const effortExplicit = globals.effort !== undefined || !!environment.env.BDSH_EFFORT;
  if (prompt !== undefined && options.attach?.length) {
    prompt = promptWithAttachments(prompt, options.attach, environment.home, environment.cwd);
  }
  // Traces over OTLP only when an endpoint is configured (the SDK is not even loaded otherwise).
  const tracing = await startOtlpTracing(environment.env);
  try {
    return await runWithStore(environment, options, globals, output, prompt, effortExplicit);
  } finally {
    await tracing?.shutdown().catch(() => undefined);
  }
}

async function runWithStore(
  environment: ReturnType<typeof cliEnvironment>,
  options: RunOptions,
  globals: GlobalOptions,
  output: Output,
  prompt: string | undefined,
  effortExplicit: boolean,
): Promise<number> {
  const { config } = environment.loaded;
  return withStore(environment, async (store) => {
    const chosen = await chooseSession(store, { ...globals, ...options }, environment.cwd, output); // a prefix, --last or --continue
    // The status line stops painting while a prompt waits for an answer (set once the view exists).
    const prompts: PromptHold = { hold: () => undefined };
    const terminal = terminalPrompts(prompts);
    const base = {
      workspace: chosen.workspace,
      env: environment.env,
      effortExplicit,
      ...(prompt ? { title: titleOf(prompt) } : {}),
      ...(options.record ? { recordFile: options.record } : {}),
      ...(options.replay ? { replayFile: options.replay } : {}),
      ...(options.apiKeyEnv ? { apiKeyEnv: options.apiKeyEnv } : {}),
      home: environment.home,
      // A run without a terminal cannot ask anyone (INTERFACE: behaves as never); `auto` still reviews (S7).
      ...(process.stdin.isTTY || config.approval === "auto" ? {} : { approval: "never" as const }),
      toolOptions: {
        home: environment.home,
        env: environment.env,
        ...(process.stdin.isTTY
          ? { approvals: terminal.approvals, questionAnswerer: terminal.questions }
          : {}),
        persistAllowlist: (key: string) => addToCommandAllowlist(environment.home, key),
        exactCommands: new CommandApprovals(environment.home),
        onPluginFailure: (failure: { name: string; path: string; error: string }) =>
          output.err(`bdsh: PLUGIN: ${failure.name} (${failure.path}): ${failure.error}`),
      },
      leaseWaitMs: 30_000,
    } satisfies Omit<Parameters<typeof openAgent>[0], "store" | "config">;
    // A SetupError (no key, unknown provider) exits 2 (cli/errors.ts).
    if (options.ralph && prompt) return await runRalphCommand(prompt, base, store, config, output);
    const { agent } = await openAgent({
      ...base,
      store,
      config,
      ...(chosen.row ? { sessionId: chosen.row.id } : {}),
    });
    if (chosen.row && !options.json) await showConversationTail(agent, output); // the stored history is shown, not replayed
    const human = options.json
      ? undefined
      : new RunView({
          stdout: process.stdout,
          stderr: process.stderr,
          env: environment.env,
          quiet: !!options.quiet,
        });
    if (human) prompts.hold = (open: boolean) => human.holdStatus(open);
    const view: View = human ?? jsonView(output.out, eventJson);
    // M20: the events of this run that record a request's usage, for the end summary's tokens and cost.
    const usageEvents: LogEvent[] = [];
    agent.log.onDurable((events) => {
      view.events(events);
      // Row 1d: a project file left out for want of a person's acceptance is said on stderr, in every mode.
      warnWithheld(events, (line) => (human ? human.notice(line) : output.err(line)));
      if (human) for (const event of events) if (requestUsage(event)) usageEvents.push(event);
    });
    if (human) agent.onDelta((delta) => human.delta(delta.type, delta.delta));
    speakAgentReplies(agent, options, { config, env: environment.env, cwd: environment.cwd, output }); // --speak
    const startSeq = agent.log.seq;
    let interrupts = 0;
    const onSignal = () => {
      interrupts++;
      if (interrupts > 1) process.exit(130);
      human?.notice("bdsh: cancelling (press Ctrl-C again to quit)");
      if (!human) output.err("bdsh: cancelling (press Ctrl-C again to quit)");
      void agent.cancel();
    };
    process.on("SIGINT", onSignal);
    const offBrokenPipe = onBrokenPipe(async () => {
      await agent.cancel();
      await agent.close();
    });
    try {
      if (options.goal && prompt) await armGoal(agent, prompt);
      const result = await runHeadless(agent, prompt);
      view.finish();
      if (options.outputLastMessage) writeFileSync(options.outputLastMessage, finalAnswer(agent, startSeq));
      if (options.goal) {
        const outcome = await goalOutcome(agent);
        if (outcome.message) output.err(sanitize(`bdsh: GOAL: ${outcome.message}`));
        return outcome.exitCode;
      }
      const end = agent.log.last("turn/end");
      if (end?.data.error) output.err(sanitize(`bdsh: ${end.data.error.code}: ${end.data.error.message}`));
      else if (result.reason && result.reason !== "completed")
        output.err(`bdsh: TURN_ENDED: the turn ended ${result.reason}`);
      if (human) {
        const usage = usageOf(usageEvents).session;
        // M20: the configured model's price (`model.price` over the table); unknown → no cost shown.
        human.summary({
          sessionId: agent.sessionId,
          usage,
          cost: costOf(usage, priceFromConfig(config.model)),
        });
      }
      return result.exitCode;
    } finally {
      process.off("SIGINT", onSignal);
      offBrokenPipe();
      await agent.close();
    }
  });
}

/** The final answer of this run: the text of its last assistant message ("" when it wrote none). */
function finalAnswer(
  agent: {
    log: {
      last(
        type: "assistant/message",
      ): { seq: number; data: { blocks: readonly { type: string; text?: string }[] } } | undefined;
    };
  },
  startSeq: number,
): string {
  const last = agent.log.last("assistant/message");
  if (!last || last.seq <= startSeq) return "";
  return last.data.blocks.map((block) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

function preview(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function titleOf(prompt: string): string {
  return preview(prompt.split("\n")[0] ?? prompt, 60);
}
