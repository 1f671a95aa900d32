/**
 * A spending cap per session (`budget.max_tokens`, `budget.max_cost_usd`; each off unless set). Before every
 * step, the session's own usage so far (M20: every request the log records, side requests included; a
 * fork's copied parent events not counted) is compared with the budget; at or over it, the turn ends
 * `blocked` before the model is called, and so does every later turn until the budget is raised.
 *
 * Invariants:
 * - The request that crosses the budget completes (its size is known only after it): a session overshoots
 *   by at most one request. Subagents are sessions of their own, each with this budget.
 * - A cost budget with no known price for the model fails closed: it cannot be checked, so no step runs
 *   (`model.price` supplies one).
 * - Only the pre-step hook decides; the loop has no branch for it.
 *
 * Model experience: when a turn is cut mid-work, at the next turn a user message from the harness:
 *   "The harness stopped your previous turn: this session reached its budget (<what>). What that turn did is
 *   kept. Before you continue, tell the user where the work stands."
 */
import type { Config } from "../config/schema.js";
import { type UsageTotals, usageOf } from "../log/usage.js";
import type { Plugin } from "../loop/plugin.js";
import { costOf, formatCost, formatTokens, type Price, priceFromConfig } from "../model/pricing.js";

export const BUDGET_CODE = "BUDGET_EXCEEDED";

export type BudgetSettings = {
  maxTokens?: number | undefined;
  maxCostUsd?: number | undefined;
  /** The configured model's price (`priceFromConfig`); needed by `maxCostUsd`. */
  price: Price | undefined;
  /** The model, named when its price is unknown. */
  model: string;
};

export function budgetSettingsFrom(config: Pick<Config, "budget" | "model">): BudgetSettings {
  return {
    maxTokens: config.budget.max_tokens,
    maxCostUsd: config.budget.max_cost_usd,
    price: priceFromConfig(config.model),
    model: `${config.model.provider}/${config.model.id}`,
  };
}

export function budgetNotice(what: string): string {
  return `The harness stopped your previous turn: this session reached its budget (${what}). What that turn did is kept. Before you continue, tell the user where the work stands.`;
}

/** Why the session may not take another step, or `undefined` while it is within its budget. */
export function budgetExceeded(usage: UsageTotals, settings: BudgetSettings): string | undefined {
  if (settings.maxTokens !== undefined) {
    const tokens = usage.input + usage.cachedInput + usage.output;
    if (tokens >= settings.maxTokens)
      return `${formatTokens(tokens)} tokens used of ${formatTokens(settings.maxTokens)}, budget.max_tokens`;
  }
  if (settings.maxCostUsd !== undefined) {
    const cost = costOf(usage, settings.price);
    if (cost === undefined)
      return `budget.max_cost_usd is set, but the price of ${settings.model} is unknown; set model.price`;
    if (cost >= settings.maxCostUsd)
      return `${formatCost(cost)} spent of ${formatCost(settings.maxCostUsd)}, budget.max_cost_usd`;
  }
  return undefined;
}

export function sessionBudgetPlugin(settings: BudgetSettings): Plugin {
  return {
    name: "session-budget",
    setup(ctx) {
      if (settings.maxTokens === undefined && settings.maxCostUsd === undefined) return;
      ctx.hooks.onWaterfall(
        "agent/pre-step",
        async (state) => {
          if (state.reject) return state;
          const over = budgetExceeded(usageOf(ctx.log.events).session, settings);
          if (over === undefined) return state;
          // A turn refused at its first step did no work the model needs to hear about.
          if (!state.firstStepOfTurn) await ctx.inbox.inject(budgetNotice(over), "turn-limit");
          return {
            ...state,
            reject: {
              code: BUDGET_CODE,
              reason: `the session reached its budget: ${over}; raise it to continue`,
            },
          };
        },
        { plugin: "session-budget" },
      );
    },
  };
}
