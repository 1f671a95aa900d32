/**
 * A goal that stalls stops (P4 "never loop forever"): when the last `STALL_ROUNDS` goal rounds in a row
 * made no tool call and no goal update, the goal is blocked with `no progress in N rounds`, so a model that
 * ignores the goal tools does not burn its way to the round cap.
 *
 * Invariants:
 * - Progress is read from the session's log events, never from a counter in memory: a round is a turn
 *   whose first user message is a `goal-round` one; it made progress when the turn holds a (non-synthetic)
 *   `tool/call` or a `goal/updated`. Any other turn (a person's message) ends the run of rounds. A
 *   restarted process therefore judges the same rounds the same way.
 * - Runs at `agent/turn-end`, after the goal plugin's own hook (this plugin is installed after it), so the
 *   goal is blocked before the idle hook would claim the next round.
 * - The block goes through the goal service like a person's `blocked` (the model's minimum rounds do not
 *   apply); the service records the `goal/updated` event and the wrap-up notice.
 */
import type { LogEvent } from "../log/events.js";
import type { Plugin, PluginContext } from "../loop/plugin.js";

/** Rounds in a row without a tool call or a goal update that block the goal. */
export const STALL_ROUNDS = 3;

export function stallReason(rounds: number): string {
  return `no progress in ${rounds} rounds`;
}

/** How many of the most recent turns, newest first, were goal rounds that made no progress. */
export function roundsWithoutProgress(events: readonly LogEvent[]): number {
  let stalled = 0;
  let end = events.length;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.type !== "turn/start") continue;
    const turn = events.slice(i, end);
    end = i;
    const opener = turn.find((e) => e.type === "user/message");
    if (opener?.type !== "user/message" || opener.data.source !== "goal-round") break;
    const progressed = turn.some(
      (e) => (e.type === "tool/call" && !e.data.synthetic) || e.type === "goal/updated",
    );
    if (progressed) break;
    stalled++;
  }
  return stalled;
}

export function goalStallPlugin(options: { rounds?: number } = {}): Plugin {
  const limit = options.rounds ?? STALL_ROUNDS;
  return {
    name: "goal-stall",
    uses: ["goalService"],
    setup(ctx: PluginContext) {
      ctx.hooks.onSerial(
        "agent/turn-end",
        async () => {
          const goals = ctx.use("goalService");
          if (!goals?.armed) return;
          if (roundsWithoutProgress(ctx.log.events) < limit) return;
          if (!(await goals.active())) return;
          // A goal changed meanwhile (GOAL_CHANGED) was changed by someone else: that change stands.
          await goals.update("blocked", "user", { reason: stallReason(limit) }).catch(() => undefined);
        },
        { plugin: "goal-stall" },
      );
    },
  };
}
