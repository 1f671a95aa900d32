/**
 * The goal plugin (P3–P5) and its round driver (P4): DSH's main fix for "stopped mid-task".
 *
 * Invariants:
 * - On every transition to idle with an active, armed goal and no queued input, the driver waits for
 *   running children, checks the cap, flushes, and claims round N through the store, which queues the
 *   `<goal_round>` follow-up in the same write: two processes never run the same round.
 * - Human input always wins: anything queued (a human message above all) is taken before a new round.
 * - Stops: the cap → blocked (`Goal reached its configured limit of N rounds.`); a `max-tokens` turn end →
 *   disarm; a person's abort → pause; an error or a blocked turn → disarm; a crash repair (R1–R2) → disarm.
 *   A turn cancelled to hand the session to another server (a graceful stop) changes nothing: the goal goes
 *   on there, armed, as the log says (`goal/armed`, folded on load).
 * - A round's first step starts a new request series (L12).
 * - `goal/updated`, `goal/round` and `goal/armed` events are written from this plugin's hooks (the driver
 *   holds the lease then): changes made by tools wait for the next one. A command from outside a drive
 *   (`/goal`, the HTTP route, `--goal`) writes them at once through the agent's exclusive section
 *   (`commit`), before any round it queues can be claimed by another server.
 *
 * Model-visible strings: ./goal-texts.ts.
 */
import type { Config } from "../config/schema.js";
import type { ChildWaiter } from "../loop/headless.js";
import type { Plugin, PluginContext } from "../loop/plugin.js";
import type { GoalRow } from "../store/planning-rows.js";
import { opensTurn } from "../store/store.js";
import { GoalService } from "./goal-service.js";
import { goalRoundText, roundLimitText } from "./goal-texts.js";
import { goalTools } from "./goal-tools.js";

declare module "../loop/plugin.js" {
  interface PluginApiMap {
    /** Waits for the agent's running subagents (S1); optional. */
    childWaiter: ChildWaiter;
    goalRounds: GoalRoundDriver;
  }
}

export type GoalPluginOptions = Pick<Config["goal"], "max_rounds" | "blocked_min_rounds"> & {
  /** Register create_goal / get_goal / update_goal (default true). */
  tools?: boolean;
};

export class GoalRoundDriver {
  constructor(
    private readonly ctx: PluginContext,
    private readonly goals: GoalService,
    /** Writes the goal's pending events now when no drive of this agent will (see the plugin). */
    readonly commit: () => Promise<void> = async () => undefined,
  ) {}

  /**
   * P4: queues the next round if the goal is active and armed and nothing else is queued. Returns the round
   * claimed, or undefined. Safe to call from any process: the store decides who gets round N.
   */
  async queueRound(): Promise<number | undefined> {
    if (!this.goals.armed) return undefined;
    const goal = await this.goals.active();
    if (!goal) {
      this.goals.disarm("no-active-goal");
      return undefined;
    }
    if (await this.inputQueued()) return undefined; // human input wins; a queued turn goes first
    if (await this.ctx.use("childWaiter")?.waitForChildren(this.ctx.sessionId)) {
      if (await this.inputQueued()) return undefined;
    }
    const current = (await this.goals.active()) ?? goal;
    if (current.roundsStarted >= current.maxRounds) {
      await this.goals.blockAtLimit(current, roundLimitText(current.maxRounds));
      return undefined;
    }
    const round = current.roundsStarted + 1;
    try {
      const claimed = await this.ctx.capability("planning").claimGoalRound(
        this.ctx.sessionId,
        { id: current.id, round },
        {
          queue: "next-turn",
          mode: "followup",
          source: "goal-round",
          text: goalRoundText(current.objective, round, current.maxRounds),
        },
      );
      if (!claimed) return undefined; // another process claimed it, or the goal changed
      this.ctx.inbox.changed();
      this.goals.recordRound(round, current.maxRounds);
      return round;
    } catch (error) {
      // P4: a queueing failure blocks the goal rather than spinning.
      await this.goals.blockAtLimit(current, `round ${round} could not be queued: ${String(error)}`);
      return undefined;
    }
  }

  private async inputQueued(): Promise<boolean> {
    return opensTurn(await this.ctx.inbox.pending());
  }
}

export function goalPlugin(options: GoalPluginOptions): Plugin {
  return {
    name: "goal",
    needs: ["planning"], // P3–P5: the goal row and its rounds' claims
    uses: ["childWaiter"], // P4: a round waits for running subagents
    setup(ctx) {
      const goals = new GoalService({
        goals: ctx.capability("planning"),
        sessionId: ctx.sessionId,
        maxRounds: options.max_rounds,
        blockedMinRounds: options.blocked_min_rounds,
        notify: (text, source) => ctx.inbox.inject(text, source),
        humanInputThisTurn: () => humanInputThisTurn(ctx),
      });
      let driving = false;
      const writeRecords = () => {
        const records = goals.takeRecords();
        if (records.length) ctx.log.add(...records);
        return records.length > 0;
      };
      /** Outside a drive, pending events go in through the exclusive section; in one, the next hook adds them. */
      const commit = async () => {
        if (driving) return;
        try {
          await ctx.exclusive(async () => {
            writeRecords();
          });
        } catch (error) {
          // Another process drives the session: the events wait for this agent's next hook.
          if ((error as { code?: unknown }).code !== "SESSION_BUSY") throw error;
        }
      };
      const driver = new GoalRoundDriver(ctx, goals, commit);
      ctx.fold(["goal/armed"], (event) => goals.applyArmed(event.data.armed));
      ctx.services.set("goalService", goals); // the goal tools'
      ctx.provide("goalService", goals);
      ctx.provide("goals", goals);
      ctx.provide("goalRounds", driver);
      if (options.tools !== false)
        for (const tool of goalTools) ctx.tools.register(tool, { source: "planning" });

      ctx.hooks.onWaterfall(
        "agent/pre-step",
        (state) => {
          writeRecords();
          if (state.firstStepOfTurn && turnOpenedByRound(ctx)) state.startsRequestSeries = true; // L12
          return state;
        },
        { plugin: "goal" },
      );
      ctx.hooks.onSerial(
        "agent/turn-stopping",
        () => {
          writeRecords();
        },
        { plugin: "goal" },
      );
      ctx.hooks.onSerial(
        "agent/turn-end",
        async ({ reason, handover }) => {
          if (reason === "aborted" && !handover) await goals.pauseAfterAbort();
          else if (reason === "max-tokens" || reason === "error" || reason === "blocked")
            goals.disarm(reason);
          if (writeRecords()) await ctx.log.flush();
        },
        { plugin: "goal" },
      );
      ctx.hooks.onSerial(
        "agent/status",
        async ({ status }) => {
          driving = status === "running";
          if (status !== "idle") return;
          writeRecords();
          // No round to queue: what was added rides the drive's last append (with the lease's release).
          if (!goals.armed) return;
          await ctx.log.flush(); // P4: the session is flushed before each round
          await driver.queueRound();
          if (writeRecords()) await ctx.log.flush();
        },
        { plugin: "goal" },
      );
      // R1–R2: a turn a crash left open was closed: its goal waits for a person, and the log says so.
      ctx.hooks.onSerial(
        "agent/repaired",
        () => {
          goals.disarm("crash-repair");
          writeRecords();
        },
        { plugin: "goal" },
      );
    },
  };
}

/** Events since the last `turn/start` (the running turn's), newest last. */
function currentTurnEvents(ctx: PluginContext) {
  const events = ctx.log.events;
  let start = events.length - 1;
  while (start >= 0 && events[start]!.type !== "turn/start") start--;
  return start < 0 ? [] : events.slice(start);
}

function humanInputThisTurn(ctx: PluginContext): boolean {
  return currentTurnEvents(ctx).some((e) => e.type === "user/message" && e.data.source === "human");
}

function turnOpenedByRound(ctx: PluginContext): boolean {
  const first = currentTurnEvents(ctx).find((e) => e.type === "user/message");
  return first?.type === "user/message" && first.data.source === "goal-round";
}

export type { GoalRow };
