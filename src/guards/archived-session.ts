/**
 * L18: an archived session is frozen. Its pre-step rejects, so a turn that reaches it ends `blocked`
 * without calling the model. Archiving is a flag on the session row, set by `bdsh sessions archive` and
 * cleared by `bdsh sessions archive --undo` (the refusal says so).
 *
 * Model experience: none; the reason is recorded as the turn's `agent/error` (code `BLOCKED`) for the
 * person reading the log.
 */
import type { Plugin } from "../loop/plugin.js";

/** What a person is told when they resume or send to an archived session (the CLI says the same). */
export function archivedSessionMessage(sessionId: string): string {
  return `session ${sessionId} is archived; \`bdsh sessions archive --undo ${sessionId}\` restores it`;
}

export const archivedSessionGuard: Plugin = {
  name: "archived-session",
  setup(ctx) {
    ctx.hooks.onWaterfall(
      "agent/pre-step",
      async (state) => {
        if (!state.firstStepOfTurn) return state;
        const row = await ctx.sessionRecord.read();
        if (!row?.archived) return state;
        return { ...state, reject: { reason: archivedSessionMessage(ctx.sessionId) } };
      },
      { plugin: "archived-session" },
    );
  },
};
