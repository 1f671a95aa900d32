/**
 * Plan mode (P2): guidance only. A fixed system-prompt section (order 500) says what plan mode means; the
 * tools stay listed and are not blocked, so the request prefix stays cacheable. Switches are announced as
 * user messages (source `mode-switch`) and recorded as `plan/mode` events; `exit_plan_mode(plan)` asks the
 * user to approve.
 *
 * Invariants:
 * - The section text never changes with the mode (a rewrite would lose the prefix cache, M23); the mode
 *   reaches the model only through the switch messages and the tool's results.
 * - `plan/mode` events are written from this plugin's hooks (the next pre-step).
 *
 * Model-visible strings: PLAN_SECTION; "The user switched this session to plan mode." / "The user switched
 * this session back to the default mode."; the question "Approve this plan and leave plan mode?" with
 * Approve / Keep planning; APPROVED_TEXT, KEEP_PLANNING_TEXT, DISMISSED_TEXT, NO_ANSWERER_TEXT.
 */
import type { NewEvent } from "../log/events.js";
import type { Plugin, PluginContext } from "../loop/plugin.js";
import { SECTION_ORDER } from "../loop/prompt.js";
import { type Static, Type, toolParameters } from "../tools/schema.js";
import type { ToolDefinition } from "../tools/types.js";

export const PLAN_SECTION =
  "Plan mode. When the user switches this session to plan mode, research and design only: read, search and ask questions, but do not edit files or run anything that changes state. When the plan is complete, present it with exit_plan_mode(plan); the user approves it or asks you to keep planning. Tools stay listed in plan mode, so holding back is up to you. When the user switches back to the default mode, work normally.";
export const ENTER_TEXT = "The user switched this session to plan mode.";
export const EXIT_TEXT = "The user switched this session back to the default mode.";
export const APPROVE_QUESTION = "Approve this plan and leave plan mode?";
export const APPROVE = "Approve";
export const KEEP_PLANNING = "Keep planning";
export const APPROVED_TEXT =
  "Plan approved — plan mode exited; carry out the plan starting with your next step.";
export const KEEP_PLANNING_TEXT = "The user chose to keep planning; revise the plan and present it again.";
export const DISMISSED_TEXT =
  "The user dismissed the question without choosing; plan mode stays on. Wait for the user's next message.";
export const NO_ANSWERER_TEXT =
  "no one can approve the plan in this session; present it in your reply instead";
export const NOT_IN_PLAN_MODE = "the session is not in plan mode";

export type Mode = "plan" | "default";

export class PlanModeService {
  private current: Mode = "default";
  private readonly records: NewEvent[] = [];

  constructor(private readonly announce: (text: string) => Promise<unknown>) {}

  get mode(): Mode {
    return this.current;
  }

  /** The user switches modes: announced to the model as a user message. */
  async switchTo(mode: Mode): Promise<void> {
    if (mode === this.current) return;
    this.set(mode);
    await this.announce(mode === "plan" ? ENTER_TEXT : EXIT_TEXT);
  }

  /** The plan was approved through `exit_plan_mode`: the tool result says so. */
  approve(): void {
    this.set("default");
  }

  takeRecords(): NewEvent[] {
    return this.records.splice(0);
  }

  /** Once the log is loaded: the mode it last recorded, unless the user switched since (a resume keeps it). */
  restore(ctx: PluginContext): void {
    if (this.records.length === 0) this.current = ctx.log.last("plan/mode")?.data.mode ?? this.current;
  }

  private set(mode: Mode): void {
    this.current = mode;
    this.records.push({ type: "plan/mode", data: { mode } });
  }
}

declare module "../tools/types.js" {
  interface ToolServiceMap {
    planMode: PlanModeService;
  }
}

declare module "../loop/plugin.js" {
  interface PluginApiMap {
    /** P2: the CLI's and the server's `/plan` and the mode shown to people. */
    planMode: PlanModeService;
  }
}

const ExitPlanModeSchema = Type.Object(
  {
    plan: Type.String({ minLength: 1, description: "The plan, in full (markdown)." }),
  },
  { additionalProperties: false },
);

export const exitPlanModeTool: ToolDefinition<Static<typeof ExitPlanModeSchema>> = {
  name: "exit_plan_mode",
  toolset: "planning",
  description:
    "Present your finished plan to the user and ask to leave plan mode. Use it only in plan mode, once the plan is complete.",
  parameters: toolParameters(ExitPlanModeSchema),
  async execute(args, exec) {
    const planMode = exec.services.require("planMode");
    if (planMode.mode !== "plan") return { text: `Error: ${NOT_IN_PLAN_MODE}`, isError: true };
    const answerer = exec.services.get("questionAnswerer");
    if (!answerer) return { text: `Error: ${NO_ANSWERER_TEXT}`, isError: true, code: "NO_ANSWERER" };
    const answers = await answerer.ask({
      callId: exec.callId,
      questions: [{ question: `${args.plan}\n\n${APPROVE_QUESTION}`, options: [APPROVE, KEEP_PLANNING] }],
      signal: exec.signal,
    });
    const answer = answers?.[0];
    if (answer === APPROVE) {
      planMode.approve();
      return { text: APPROVED_TEXT };
    }
    if (answer === KEEP_PLANNING) return { text: `Error: ${KEEP_PLANNING_TEXT}`, isError: true };
    exec.concludeTurn(); // P2: dismissed
    return { text: DISMISSED_TEXT };
  },
};

export function planModePlugin(options: { tools?: boolean } = {}): Plugin {
  return {
    name: "plan-mode",
    setup(ctx) {
      const service = new PlanModeService((text) => ctx.inbox.inject(text, "mode-switch"));
      ctx.services.set("planMode", service); // exit_plan_mode's
      ctx.provide("planMode", service);
      ctx.prompt.addSection({ name: "plan-mode", order: SECTION_ORDER.plan, text: PLAN_SECTION });
      if (options.tools !== false) ctx.tools.register(exitPlanModeTool, { source: "planning" });
      let restored = false;
      const write = () => {
        const records = service.takeRecords();
        if (records.length) ctx.log.add(...records);
      };
      ctx.hooks.onWaterfall(
        "agent/pre-step",
        (state) => {
          if (!restored) {
            restored = true;
            service.restore(ctx);
          }
          write();
          return state;
        },
        { plugin: "plan-mode" },
      );
      ctx.hooks.onSerial("agent/turn-stopping", write, { plugin: "plan-mode" });
    },
  };
}
