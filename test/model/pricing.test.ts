/**
 * M20: the price table, the cost of a usage, and how tokens, usage and cost are written for people.
 */

import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { emptyUsage, type UsageTotals } from "../../src/log/usage.js";
import { PROVIDER_NAMES } from "../../src/model/catalog.js";
import {
  costOf,
  formatTokens,
  formatUsage,
  type Price,
  pricedModels,
  priceFor,
  priceFromConfig,
} from "../../src/model/pricing.js";

const u = (t: Partial<UsageTotals>): UsageTotals => ({ ...emptyUsage(), requests: 1, ...t });
const FLASH: Price = { input: 0.3, cachedInput: 0.006, output: 1.2 };

describe("priceFor", () => {
  const rows: [string, string, string, Partial<Price> | undefined, Price | undefined][] = [
    ["a listed model", "deepseek", "deepseek-flash", undefined, FLASH],
    ["a legacy name billed at the Flash price", "deepseek", "deepseek-v4-flash", undefined, FLASH],
    ["the same model on the /anthropic endpoint", "deepseek-anthropic", "deepseek-flash", undefined, FLASH],
    [
      "a dated snapshot of a listed model",
      "anthropic",
      "claude-sonnet-4-5-20250929",
      undefined,
      { input: 3, cacheWrite: 3.75, cachedInput: 0.3, output: 15 },
    ],
    [
      "a dated OpenAI snapshot",
      "openai",
      "gpt-5.4-2026-03-05",
      undefined,
      { input: 2.5, cachedInput: 0.25, output: 15 },
    ],
    ["an unknown model", "deepseek", "deepseek-next", undefined, undefined],
    ["a model listed under another provider", "openrouter", "deepseek-flash", undefined, undefined],
    ["a local server without an override", "openai-compatible", "qwen3", undefined, undefined],
    ["a partial override of an unknown model", "openai-compatible", "qwen3", { output: 1 }, undefined],
    [
      "a full override of an unknown model",
      "openai-compatible",
      "qwen3",
      { input: 0.1, cachedInput: 0.01, output: 0.4 },
      { input: 0.1, cachedInput: 0.01, output: 0.4 },
    ],
    [
      "an override of one field of a listed model",
      "deepseek",
      "deepseek-flash",
      { output: 0.6 },
      { ...FLASH, output: 0.6 },
    ],
    [
      "a free local model",
      "openai-compatible",
      "qwen3",
      { input: 0, cachedInput: 0, output: 0 },
      { input: 0, cachedInput: 0, output: 0 },
    ],
  ];
  for (const [name, provider, model, override, expected] of rows) {
    it(name, () => {
      expect(priceFor(provider, model, override)).toEqual(expected);
    });
  }

  it("every row belongs to a provider preset and has non-negative prices", () => {
    const models = pricedModels();
    expect(models.length).toBeGreaterThan(0);
    for (const { provider, price } of models) {
      expect(PROVIDER_NAMES).toContain(provider);
      for (const value of Object.values(price)) expect(value).toBeGreaterThanOrEqual(0);
    }
  });
});

describe("costOf", () => {
  const rows: [string, UsageTotals, Price | undefined, number | undefined][] = [
    ["unknown price", u({ input: 1000, output: 10 }), undefined, undefined],
    ["no tokens", emptyUsage(), FLASH, 0],
    ["uncached input only", u({ input: 1_000_000 }), FLASH, 0.3],
    ["cached input at its own rate", u({ cachedInput: 1_000_000 }), FLASH, 0.006],
    ["output, reasoning included once", u({ output: 1_000_000, reasoning: 400_000 }), FLASH, 1.2],
    [
      "a mix",
      u({ input: 12_000, cachedInput: 8_000, output: 1_200 }),
      FLASH,
      (12_000 * 0.3 + 8_000 * 0.006 + 1_200 * 1.2) / 1e6,
    ],
    [
      "cache writes at the write rate",
      u({ input: 1_000_000, cacheWriteInput: 400_000 }),
      { input: 3, cachedInput: 0.3, output: 15, cacheWrite: 3.75 },
      600_000 * 3e-6 + 400_000 * 3.75e-6,
    ],
    [
      "cache writes at the input rate without a write price",
      u({ input: 1_000_000, cacheWriteInput: 400_000 }),
      FLASH,
      0.3,
    ],
  ];
  for (const [name, usage, price, expected] of rows) {
    it(name, () => {
      const cost = costOf(usage, price);
      if (expected === undefined) expect(cost).toBeUndefined();
      else expect(cost).toBeCloseTo(expected, 12);
    });
  }
});

describe("formatTokens", () => {
  const rows: [number, string][] = [
    [0, "0"],
    [950, "950"],
    [999, "999"],
    [1000, "1k"],
    [12_345, "12.3k"],
    [999_949, "999.9k"],
    [999_950, "1M"],
    [1_234_567, "1.2M"],
    [-3, "0"],
  ];
  for (const [n, text] of rows) it(`${n} → ${text}`, () => expect(formatTokens(n)).toBe(text));
});

describe("formatUsage", () => {
  const rows: [string, UsageTotals, number | undefined | null, string][] = [
    [
      "the brief's example",
      u({ input: 4_200, cachedInput: 8_100, output: 1_200 }),
      0.0042,
      "12.3k in (8.1k cached) · 1.2k out · 1 request · $0.0042",
    ],
    [
      "no cache hits, cost unknown",
      u({ input: 950, output: 12 }),
      undefined,
      "950 in · 12 out · 1 request · cost unknown",
    ],
    ["a free model", u({ input: 10, output: 1 }), 0, "10 in · 1 out · 1 request · $0.00"],
    [
      "cents and up, reasoning shown",
      u({ input: 2_000_000, output: 100_000, reasoning: 4_000, requests: 3 }),
      12.345,
      "2M in · 100k out (4k reasoning) · 3 requests · $12.35",
    ],
    ["under a cent, no price shown", u({ input: 100, output: 10 }), null, "100 in · 10 out · 1 request"],
  ];
  for (const [name, usage, cost, text] of rows) it(name, () => expect(formatUsage(usage, cost)).toBe(text));
});

describe("model.price in the config", () => {
  function home(yaml: string): { home: string; cwd: string } {
    const root = mkdtempSync(join(tmpdir(), "bdsh-price-"));
    mkdirSync(join(root, "home"));
    mkdirSync(join(root, "work"));
    writeFileSync(join(root, "home", "config.yaml"), yaml);
    return { home: join(root, "home"), cwd: join(root, "work") };
  }

  it("overrides the table field by field", () => {
    const where = home("model:\n  price: { input: 1, cached_input: 0.1, output: 2, cache_write: 1.5 }\n");
    const { config } = loadConfig({ ...where, env: {} });
    expect(priceFromConfig(config.model)).toEqual({ input: 1, cachedInput: 0.1, output: 2, cacheWrite: 1.5 });
  });

  it("without it the configured model takes the table's price", () => {
    const { config } = loadConfig({ ...home("{}\n"), env: {} });
    expect(priceFromConfig(config.model)).toEqual(priceFor(config.model.provider, config.model.id));
  });

  it("names the key and the file for a bad price", () => {
    const where = home("model:\n  price: { input: -1 }\n");
    expect(() => loadConfig({ ...where, env: {} })).toThrow(
      expect.objectContaining({ key: "model.price.input", source: join(where.home, "config.yaml") }),
    );
  });

  it("names the key and the file for an unknown price field", () => {
    const where = home("model:\n  price: { cached: 0.1 }\n");
    expect(() => loadConfig({ ...where, env: {} })).toThrow(
      expect.objectContaining({ key: "model.price.cached", source: join(where.home, "config.yaml") }),
    );
  });
});
