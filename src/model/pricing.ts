/**
 * M20: what a session's tokens cost, from a price table kept as data (USD per million tokens).
 *
 * Invariants:
 * - Only published list prices, each row with its source and the date it was read. A model that is not in
 *   the table has no price (`undefined`), and the views say "cost unknown"; a price is never guessed.
 * - `model.price` in the config overrides the table field by field; a full override prices any model.
 * - The usage is disjoint (see ../log/usage.ts): uncached input at `input`, cache reads at `cachedInput`,
 *   output (reasoning included) at `output`, and cache writes at `cacheWrite` where a provider bills them
 *   apart (Anthropic), else at `input`.
 * - DeepSeek bills off-peak hours at half its peak rate (peak 01:00–04:00 and 06:00–10:00 UTC). A flat
 *   price cannot follow the clock, so its rows are the peak rates: the cost shown is an upper bound.
 */
import type { Config } from "../config/schema.js";
import { formatTokens, type UsageTotals } from "../log/usage.js";

export { formatTokens };

export type Price = {
  input: number;
  cachedInput: number;
  output: number;
  /** Cache-write input where billed apart from `input` (Anthropic's 5-minute writes). */
  cacheWrite?: number;
};

type Row = Price & { models: readonly string[] };

// DeepSeek, https://api-docs.deepseek.com/quick_start/pricing (read 2026-11-15, peak rates, see above).
// The page: "the legacy names deepseek-v4-flash and deepseek-v4-flash-vision-exp are still accepted …
// served by the DeepSeek-V4.1-Flash model and billed at the Flash price". Both wire formats (OpenAI and
// /anthropic) are the same models at the same prices.
const DEEPSEEK: readonly Row[] = [
  {
    models: ["deepseek-flash", "deepseek-v4-flash", "deepseek-v4-flash-vision-exp"],
    input: 0.3,
    cachedInput: 0.006,
    output: 1.2,
  },
  { models: ["deepseek-v4-pro"], input: 1.32, cachedInput: 0.044, output: 3.96 },
];

// Anthropic, https://platform.claude.com/docs/en/about-claude/pricing, "Model pricing" (read 2026-12-04):
// base input, 5-minute cache writes, cache hits and output per MTok.
const ANTHROPIC: readonly Row[] = [
  {
    models: ["claude-fable-5-1", "claude-mythos-5-1"],
    input: 10,
    cacheWrite: 12.5,
    cachedInput: 0.25,
    output: 50,
  },
  { models: ["claude-fable-5", "claude-mythos-5"], input: 10, cacheWrite: 12.5, cachedInput: 1, output: 50 },
  {
    models: ["claude-opus-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-opus-4-5"],
    input: 5,
    cacheWrite: 6.25,
    cachedInput: 0.5,
    output: 25,
  },
  {
    models: ["claude-opus-4-1", "claude-opus-4-0", "claude-opus-4"],
    input: 15,
    cacheWrite: 18.75,
    cachedInput: 1.5,
    output: 75,
  },
  // https://platform.claude.com/docs/en/models/sonnet-5/overview, "Pricing" (read 2026-12-04).
  { models: ["claude-sonnet-5"], input: 2, cacheWrite: 2.5, cachedInput: 0.2, output: 10 },
  // Sonnet 4.5/4.6 and Haiku 4.5: $3/$15 and $1/$5 from the models overview ("Price / MTok", read
  // 2026-12-04); cache writes 1.25x and hits 0.1x of base input per the pricing page's prompt-caching rules.
  {
    models: ["claude-sonnet-4-6", "claude-sonnet-4-5"],
    input: 3,
    cacheWrite: 3.75,
    cachedInput: 0.3,
    output: 15,
  },
  { models: ["claude-haiku-4-5"], input: 1, cacheWrite: 1.25, cachedInput: 0.1, output: 5 },
];

// OpenAI, https://developers.openai.com/api/docs/pricing, Standard tier, short context (as quoted on
// 2026-06-04 by tokenmix.ai and morphllm.com, re-read 2026-12-04). GPT-5.5 bills a request over 272K input
// tokens at higher rates for the whole request; such requests are underestimated here.
const OPENAI: readonly Row[] = [
  { models: ["gpt-5.5"], input: 5, cachedInput: 0.5, output: 30 },
  { models: ["gpt-5.4"], input: 2.5, cachedInput: 0.25, output: 15 },
  { models: ["gpt-5.4-mini"], input: 0.75, cachedInput: 0.075, output: 4.5 },
  { models: ["gpt-5.4-nano"], input: 0.2, cachedInput: 0.02, output: 1.25 },
];

const TABLE: Readonly<Record<string, readonly Row[]>> = {
  deepseek: DEEPSEEK,
  "deepseek-anthropic": DEEPSEEK,
  anthropic: ANTHROPIC,
  openai: OPENAI,
  // Together and OpenRouter resell many models at their own, often changing prices; no row was verified, so
  // their models are "cost unknown" until `model.price` names one.
  together: [],
  openrouter: [],
  // Local servers: no list price exists; `model.price` sets one.
  "openai-compatible": [],
};

/**
 * The models of a provider preset this table knows (each row's first, current name; legacy aliases left
 * out): what chat's `/model` picker offers. Empty for resellers and local servers, whose lists vary.
 */
export function knownModels(provider: string): string[] {
  return (TABLE[provider] ?? []).map((row) => row.models[0] as string);
}

/** A dated snapshot (`-20250929`) or `-latest` names the same row as the bare id. */
function normalise(modelId: string): string {
  return modelId
    .trim()
    .toLowerCase()
    .replace(/-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, "");
}

/** The table's price for a model of a provider preset, with `override` (`model.price`) applied. */
export function priceFor(provider: string, modelId: string, override?: Partial<Price>): Price | undefined {
  const id = normalise(modelId);
  const row = TABLE[provider]?.find((r) => r.models.includes(id));
  const base: Partial<Price> = row ? priceOf(row) : {};
  const merged: Partial<Price> = { ...base, ...definedOnly(override) };
  if (merged.input === undefined || merged.cachedInput === undefined || merged.output === undefined) {
    return undefined;
  }
  const price: Price = { input: merged.input, cachedInput: merged.cachedInput, output: merged.output };
  if (merged.cacheWrite !== undefined) price.cacheWrite = merged.cacheWrite;
  return price;
}

/** The price of the configured model: the table's row under `model.price`. */
export function priceFromConfig(
  model: Pick<Config["model"], "provider" | "id" | "price">,
): Price | undefined {
  const o = model.price;
  const override: Partial<Price> = {};
  if (o?.input !== undefined) override.input = o.input;
  if (o?.cached_input !== undefined) override.cachedInput = o.cached_input;
  if (o?.output !== undefined) override.output = o.output;
  if (o?.cache_write !== undefined) override.cacheWrite = o.cache_write;
  return priceFor(model.provider, model.id, override);
}

/** The providers and model ids the table prices (for `doctor` and docs). */
export function pricedModels(): { provider: string; model: string; price: Price }[] {
  return Object.entries(TABLE).flatMap(([provider, rows]) =>
    rows.flatMap((row) => row.models.map((model) => ({ provider, model, price: priceOf(row) }))),
  );
}

/** USD for the usage at the price; `undefined` when the price is unknown. */
export function costOf(usage: UsageTotals, price: Price | undefined): number | undefined {
  if (!price) return undefined;
  const writes = Math.min(usage.cacheWriteInput ?? 0, usage.input);
  const plainInput = usage.input - writes;
  const micro =
    plainInput * price.input +
    writes * (price.cacheWrite ?? price.input) +
    usage.cachedInput * price.cachedInput +
    usage.output * price.output;
  return micro / 1_000_000;
}

/** USD with enough digits to be seen: $0.0042, $0.042, $1.23, $12.35. */
export function formatCost(cost: number): string {
  if (cost === 0) return "$0.00";
  if (cost < 0.01) return `$${cost.toPrecision(2).replace(/(\.\d*?[1-9])0+$/, "$1")}`;
  return `$${cost.toFixed(2)}`;
}

/**
 * "12.3k in (8.1k cached) · 1.2k out (300 reasoning) · 4 requests · $0.0042": the one way every view
 * (chat's status and /cost, `sessions show`, the run summary) writes usage. "in" counts all input, cached
 * reads included; `cost` undefined (no price) says "cost unknown", `null` leaves the cost out.
 */
export function formatUsage(usage: UsageTotals, cost: number | undefined | null): string {
  const input = usage.input + usage.cachedInput;
  const cached = usage.cachedInput > 0 ? ` (${formatTokens(usage.cachedInput)} cached)` : "";
  const reasoning = usage.reasoning > 0 ? ` (${formatTokens(usage.reasoning)} reasoning)` : "";
  const requests = `${usage.requests} request${usage.requests === 1 ? "" : "s"}`;
  const parts = [
    `${formatTokens(input)} in${cached}`,
    `${formatTokens(usage.output)} out${reasoning}`,
    requests,
  ];
  if (cost !== null) parts.push(cost === undefined ? "cost unknown" : formatCost(cost));
  return parts.join(" · ");
}

function priceOf(row: Row): Price {
  const price: Price = { input: row.input, cachedInput: row.cachedInput, output: row.output };
  if (row.cacheWrite !== undefined) price.cacheWrite = row.cacheWrite;
  return price;
}

function definedOnly(override: Partial<Price> | undefined): Partial<Price> {
  const out: Partial<Price> = {};
  for (const key of ["input", "cachedInput", "output", "cacheWrite"] as const) {
    const value = override?.[key];
    if (typeof value === "number" && Number.isFinite(value) && value >= 0) out[key] = value;
  }
  return out;
}
