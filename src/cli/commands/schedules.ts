/**
 * `bdsh schedules run [--once]` (S8): a worker that delivers due schedule reminders and runs the sessions
 * that received one. Several workers (and `serve`) may share one database: each occurrence is claimed
 * through the store, so exactly one of them delivers it; a session is driven by whoever holds its lease.
 */
import type { Command } from "commander";
import { runHeadless } from "../../loop/headless.js";
import { deliverDueSchedules } from "../../planning/schedules.js";
import { openAgent } from "../../presets/open-agent.js";
import type { Store } from "../../store/store.js";
import { type CliEnvironment, cliEnvironment, type GlobalOptions, withStore } from "../environment.js";
import { EXIT_OK } from "../errors.js";
import type { Output } from "../output.js";

export function registerSchedules(
  program: Command,
  output: Output,
  setExitCode: (code: number) => void,
): void {
  const schedules = program.command("schedules").description("scheduled reminders");
  schedules
    .command("run")
    .description("deliver due reminders and run the sessions that get them")
    .option("--once", "one sweep, then exit")
    .action(async (options: { once?: boolean }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      setExitCode(
        await withStore(environment, (store) => runWorker(store, environment, output, !!options.once)),
      );
    });
}

async function runWorker(
  store: Store,
  environment: CliEnvironment,
  output: Output,
  once: boolean,
): Promise<number> {
  const { config } = environment.loaded;
  let stopped = false;
  const stop = () => {
    stopped = true;
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    do {
      const delivered = await deliverDueSchedules(store, Date.now());
      for (const sessionId of new Set(delivered.map((item) => item.sessionId))) {
        output.err(`bdsh: schedules: reminder delivered to session ${sessionId}`);
        const session = await store.getSession(sessionId);
        const workspace =
          typeof session?.metadata.workspace === "string" ? session.metadata.workspace : environment.cwd;
        const { agent } = await openAgent({
          store,
          config,
          workspace,
          sessionId,
          env: environment.env,
          home: environment.home,
          approval: "never",
          leaseWaitMs: 0,
        });
        try {
          await runHeadless(agent, undefined);
        } finally {
          await agent.close();
        }
      }
      if (!once && !stopped)
        await new Promise((resolve) => setTimeout(resolve, config.schedules.poll_interval_ms));
    } while (!once && !stopped);
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
  return EXIT_OK;
}
