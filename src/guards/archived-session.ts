/**
 * L18: an archived session is frozen. Its pre-step rejects, so a turn that reaches it ends `blocked`
 * without calling the model. Archiving is a flag on the session row, set by `bdsh sessions archive`.
 */
import type { Plugin } from "../loop/plugin.js";

export const archivedSessionGuard: Plugin = {
  name: "archived-session",
  setup(ctx) {
    ctx.hooks.onWaterfall(
      "agent/pre-step",
      async (state) => {
        if (!state.firstStepOfTurn) return state;
        const row = await ctx.store.getSession(ctx.sessionId);
        if (!row?.archived) return state;
        return {
          ...state,
          reject: { reason: "the session is archived; unarchive it or fork it to continue" },
        };
      },
      { plugin: "archived-session" },
    );
  },
};
