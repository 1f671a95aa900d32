/**
 * `bdsh chat` without a terminal: one line of
 * standard input is one message, the reply and tool cards print as in `bdsh run` (without the status
 * line), slash commands work, and nobody can be asked: approvals fail closed, as in a headless run.
 *
 * A line read while a turn runs steers it (L4). `/exit` or the end of input waits for the running turn,
 * then leaves. Errors are printed with what to do, never swallowed.
 */
import { createInterface } from "node:readline";
import type { Config } from "../../config/schema.js";
import { usageOf } from "../../log/usage.js";
import { costOf, formatUsage, priceFromConfig } from "../../model/pricing.js";
import type { StandardAgent } from "../../presets/standard-agent.js";
import type { Store } from "../../store/store.js";
import type { Output } from "../output.js";
import { sanitize } from "../render/terminal-text.js";
import { RunView } from "../run-view.js";
import { shortId } from "../short-id.js";
import { errorHint } from "./chat-screen.js";
import { type ChatControl, runSlashCommand, sessionSwitching } from "./slash-commands.js";

export type PlainChatOptions = {
  store: Store;
  config: Config;
  workspace: string;
  sessionId?: string;
  /** Sent as the first message, before any line of standard input. */
  firstMessage?: string;
  env: NodeJS.ProcessEnv;
  output: Output;
  open: (options: { sessionId?: string; config: Config; effortExplicit?: boolean }) => Promise<StandardAgent>;
};

export async function runPlainChat(options: PlainChatOptions): Promise<void> {
  const { output } = options;
  let config = options.config;
  let effortChosen = false;
  let agent: StandardAgent | undefined;
  let view: RunView | undefined;
  let detach: (() => void) | undefined;
  let leaving = false;

  const report = (error: unknown) => {
    const code =
      error && typeof error === "object" && "code" in error && typeof error.code === "string"
        ? error.code
        : "ERROR";
    output.err(sanitize(`bdsh: ${code}: ${error instanceof Error ? error.message : String(error)}`));
    const hint = errorHint(code);
    if (hint) output.err(`  ${hint}`);
  };

  async function attach(sessionId: string | undefined): Promise<void> {
    const next = await options.open({
      ...(sessionId ? { sessionId } : {}),
      config,
      ...(effortChosen ? { effortExplicit: true } : {}),
    });
    const v = new RunView({
      stdout: process.stdout,
      stderr: process.stderr,
      env: options.env,
      statusLine: false,
    });
    const offDurable = next.log.onDurable((events) => {
      v.events(events);
      for (const event of events) {
        if (event.type !== "turn/end") continue;
        v.finish();
        if (event.data.error) report(event.data.error);
        else if (event.data.reason !== "completed") output.err(`bdsh: the turn ended ${event.data.reason}`);
      }
    });
    const offDelta = next.onDelta((delta) => v.delta(delta.type, delta.delta));
    detach = () => {
      offDurable();
      offDelta();
    };
    agent = next;
    view = v;
    output.err(`session ${shortId(next.sessionId)} — /help for commands`);
    await next.open().catch(report);
  }

  async function detachAgent(): Promise<void> {
    const old = agent;
    if (!old) return;
    detach?.();
    agent = undefined;
    await old.close();
  }

  const control: ChatControl = {
    agent: () => agent,
    store: options.store,
    workspace: options.workspace,
    usageLine: () => {
      const usage = usageOf(agent?.log.events ?? []).session;
      return formatUsage(usage, costOf(usage, priceFromConfig(config.model)));
    },
    ...sessionSwitching({
      store: options.store,
      sessionId: () => agent?.sessionId,
      detach: detachAgent,
      attach,
      config: () => config,
      setConfig: (next, chosen) => {
        config = next;
        effortChosen ||= chosen;
      },
    }),
    exit: () => {
      leaving = true;
    },
  };

  // A session that cannot be opened (no key, unknown provider) ends chat with its one error and exit code:
  // with nobody at a terminal, reading on would only say "no session" for every line and exit 0.
  await attach(options.sessionId);
  /** One message or slash command; true when it asked to leave. */
  const handle = async (line: string): Promise<boolean> => {
    try {
      const reply = await runSlashCommand(line, control);
      if (reply !== undefined) {
        if (reply) output.err(reply);
        return leaving;
      }
      if (!agent) {
        output.err("No session is open; /new opens one.");
        return false;
      }
      if (agent.status === "running") await agent.steer(line);
      else await agent.followup(line);
    } catch (error) {
      report(error);
    }
    return false;
  };
  const rl = createInterface({ input: process.stdin, terminal: false });
  const leftAtOnce = options.firstMessage ? await handle(options.firstMessage) : false;
  if (!leftAtOnce) {
    for await (const raw of rl) {
      const line = raw.trim();
      if (line && (await handle(line))) break;
    }
  }
  rl.close();
  await agent?.whenIdle().catch(report);
  view?.finish();
  await detachAgent().catch(report);
}
