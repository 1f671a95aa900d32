/**
 * `bdsh run --ralph OBJECTIVE` (P7, opt-in): a Ralph loop from the command line. Each round is a fresh
 * worker session (a child of the run's session) that sees only the objective and the previous round's
 * handoff, and ends by calling `ralph_report`; the workspace is the memory. Exit 0 when a round reports
 * `complete`, 1 otherwise.
 */
import type { Config } from "../../config/schema.js";
import { runHeadless } from "../../loop/headless.js";
import type { Plugin } from "../../loop/plugin.js";
import { ralphReportTool, runRalph } from "../../planning/ralph.js";
import { type OpenAgentOptions, openAgent } from "../../presets/open-agent.js";
import type { Store } from "../../store/store.js";
import { warnWithheld } from "../instruction-review.js";
import type { Output } from "../output.js";
import { sanitize } from "../render/terminal-text.js";

const ralphReportPlugin: Plugin = {
  name: "ralph-report",
  setup(ctx) {
    ctx.tools.register(ralphReportTool, { source: "ralph" });
  },
};

export async function runRalphCommand(
  objective: string,
  base: Omit<OpenAgentOptions, "store" | "config" | "sessionId">,
  store: Store,
  config: Config,
  output: Output,
): Promise<number> {
  const parent = await store.createSession({
    title: `ralph: ${objective.slice(0, 50)}`,
    metadata: { ralph: { objective } },
  });
  output.err(`ralph loop ${parent.id}`);
  const result = await runRalph({
    store,
    parentSessionId: parent.id,
    objective,
    maxRounds: config.ralph.max_rounds,
    handoffMaxChars: config.ralph.handoff_max_chars,
    async runWorker(sessionId, prompt) {
      const { agent } = await openAgent({
        ...base,
        store,
        config,
        sessionId,
        plugins: [...(base.plugins ?? []), ralphReportPlugin],
      });
      agent.log.onDurable((events) => warnWithheld(events, output.err)); // row 1d
      await runHeadless(agent, prompt);
      await agent.close();
      const report = agent.log.last("tool/call");
      output.err(
        `  round in ${sessionId}: ${report?.data.name === "ralph_report" ? "reported" : "no report"}`,
      );
    },
  });
  output.err(`ralph: ${result.status} after ${result.rounds} round(s)`);
  if (result.handoff) output.out(sanitize(result.handoff.summary));
  return result.status === "complete" ? 0 : 1;
}
