/**
 * L3 and `budget.*`: a model that never stops calling tools is stopped, by the step limit per turn and by
 * the session's token or cost budget. Each ends the turn `blocked` with an error the person sees (code and
 * the key that lifts it), before the model is called again; the model is told at its next turn. Driven
 * through the standard preset on a real store, the fake provider at the network edge, and once through the
 * built CLI.
 */

import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load.js";
import { type Config, DEFAULT_CONFIG } from "../../src/config/schema.js";
import { restrictProjectLayer } from "../../src/config/security-keys.js";
import { BUDGET_CODE, budgetNotice } from "../../src/guards/session-budget.js";
import { STEP_LIMIT_CODE, stepLimitNotice } from "../../src/guards/step-limit.js";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, type FakeReply, startFakeProvider } from "../../testing/fake-provider/index.js";
import { runCli } from "../support/run-cli.js";
import { openTestAgent } from "../support/test-agent.js";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

type Message = { role: string; content?: unknown };

/** A model that calls a harmless tool on every request, until a `stop after` count, then answers. */
function busyModel(options: { stopAfter: number; usage?: FakeReply["usage"] }) {
  return (request: { body?: Record<string, unknown> }, index: number): FakeReply => {
    const messages = (request.body?.messages ?? []) as Message[];
    const usage = options.usage ? { usage: options.usage } : {};
    if (messages.some((m) => m.role === "user" && JSON.stringify(m.content).includes("where are we")))
      return { text: "summary", ...usage };
    if (index + 1 >= options.stopAfter) return { text: "finally done", ...usage };
    return { toolCalls: [{ id: `c${index}`, name: "glob", arguments: { pattern: "*.none" } }], ...usage };
  };
}

function configWith(url: string, patch: Partial<Config>): Config {
  return {
    ...DEFAULT_CONFIG,
    model: { ...DEFAULT_CONFIG.model, base_url: url },
    session: { titles: false },
    continuation: { ...DEFAULT_CONFIG.continuation, announced_action: false, open_todos: false },
    ...patch,
  };
}

async function openOn(store: Store, home: string, workspace: string, config: Config, sessionId?: string) {
  const { agent } = await openTestAgent({
    store,
    config,
    workspace,
    home,
    ...(sessionId ? { sessionId } : {}),
  });
  return agent;
}

async function oneTurn(store: Store, config: Config, text: string, sessionId?: string) {
  const home = mkdtempSync(join(tmpdir(), "bdsh-limits-"));
  const workspace = mkdtempSync(join(tmpdir(), "bdsh-ws-"));
  const agent = await openOn(store, home, workspace, config, sessionId);
  try {
    await agent.followup(text);
    await agent.whenIdle();
    return { sessionId: agent.sessionId, events: await store.read(agent.sessionId) };
  } finally {
    await agent.close();
  }
}

const lastTurnEnd = (events: LogEvent[]) => events.findLast((e) => e.type === "turn/end");

function userTexts(request: { body?: Record<string, unknown> } | undefined): string {
  return ((request?.body?.messages ?? []) as Message[])
    .filter((m) => m.role === "user")
    .map((m) => JSON.stringify(m.content))
    .join("\n");
}

describe("L3 step limit per turn (loop.max_steps_per_turn)", () => {
  it("defaults to 200 steps", () => {
    expect(DEFAULT_CONFIG.loop.max_steps_per_turn).toBe(200);
  });

  it("ends a turn that keeps calling tools after N steps, blocked with STEP_LIMIT, before the model is called again", async () => {
    fake = await startFakeProvider({ script: busyModel({ stopAfter: 50 }) });
    const store = await openStore({ home: mkdtempSync(join(tmpdir(), "bdsh-limits-db-")) });
    try {
      const config = configWith(fake.url, { loop: { max_steps_per_turn: 4 } });
      const { sessionId, events } = await oneTurn(store, config, "keep going");
      expect(fake.requests).toHaveLength(4);
      expect(lastTurnEnd(events)).toMatchObject({
        data: {
          reason: "blocked",
          error: { code: STEP_LIMIT_CODE, message: expect.stringContaining("loop.max_steps_per_turn") },
        },
      });
      expect(events.filter((e) => e.type === "step/start")).toHaveLength(4);
      // Every call the model made was answered: the stop came between steps, never inside one.
      expect(events.filter((e) => e.type === "tool/result")).toHaveLength(4);

      // The model hears why at its next turn, and the turn goes on from where it stopped.
      const next = await oneTurn(store, config, "where are we?", sessionId);
      expect(userTexts(fake.requests[4])).toContain(stepLimitNotice(4));
      expect(lastTurnEnd(next.events)).toMatchObject({ data: { reason: "completed" } });
    } finally {
      await store.close();
    }
  });

  it("bdsh run prints the reason with its code and exits 1", async () => {
    fake = await startFakeProvider({ script: busyModel({ stopAfter: 50 }) });
    const home = mkdtempSync(join(tmpdir(), "bdsh-limits-cli-"));
    writeFileSync(join(home, "config.yaml"), "loop: { max_steps_per_turn: 2 }\n");
    const result = await runCli(
      ["run", "keep going"],
      { BDSH_HOME: home, BDSH_BASE_URL: fake.url, DEEPSEEK_API_KEY: "test" },
      mkdtempSync(join(tmpdir(), "bdsh-limits-ws-")),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `bdsh: ${STEP_LIMIT_CODE}: the turn stopped after 2 steps (loop.max_steps_per_turn)`,
    );
    expect(fake.requests).toHaveLength(2);
  });
});

describe("the session budget (budget.max_tokens, budget.max_cost_usd)", () => {
  it("is off by default", () => {
    expect(DEFAULT_CONFIG.budget).toEqual({});
  });

  it("a token budget ends the turn before the request after the one that reached it, and every later turn at once", async () => {
    fake = await startFakeProvider({
      script: busyModel({ stopAfter: 50, usage: { input: 80, output: 20 } }),
    });
    const store = await openStore({ home: mkdtempSync(join(tmpdir(), "bdsh-limits-db-")) });
    try {
      const config = configWith(fake.url, { budget: { max_tokens: 250 } });
      const { sessionId, events } = await oneTurn(store, config, "keep going");
      expect(fake.requests).toHaveLength(3); // 100 + 100 + 100 tokens: 300 ≥ 250 before the fourth
      expect(lastTurnEnd(events)).toMatchObject({
        data: {
          reason: "blocked",
          error: { code: BUDGET_CODE, message: expect.stringContaining("budget.max_tokens") },
        },
      });

      // Over budget, a new turn ends before the model is called.
      const refused = await oneTurn(store, config, "where are we?", sessionId);
      expect(fake.requests).toHaveLength(3);
      expect(lastTurnEnd(refused.events)).toMatchObject({
        data: { reason: "blocked", error: { code: BUDGET_CODE } },
      });

      // The user raises the budget: the model is told why its turn stopped, and answers.
      const raised = configWith(fake.url, { budget: { max_tokens: 10_000 } });
      const resumed = await oneTurn(store, raised, "where are we?", sessionId);
      expect(userTexts(fake.requests[3])).toContain(
        budgetNotice("300 tokens used of 250, budget.max_tokens"),
      );
      expect(lastTurnEnd(resumed.events)).toMatchObject({ data: { reason: "completed" } });
    } finally {
      await store.close();
    }
  });

  it("a cost budget stops at the configured price, and fails closed when the model's price is unknown", async () => {
    fake = await startFakeProvider({
      script: busyModel({ stopAfter: 50, usage: { input: 1_000_000, output: 0 } }),
    });
    const store = await openStore({ home: mkdtempSync(join(tmpdir(), "bdsh-limits-db-")) });
    try {
      const priced = configWith(fake.url, { budget: { max_cost_usd: 2.5 } });
      priced.model = {
        ...priced.model,
        id: "mystery-model",
        price: { input: 1, cached_input: 0.1, output: 2 },
      };
      const { events } = await oneTurn(store, priced, "keep going");
      expect(fake.requests).toHaveLength(3); // $1 a request: $3.00 ≥ $2.50 before the fourth
      expect(lastTurnEnd(events)).toMatchObject({
        data: {
          error: {
            code: BUDGET_CODE,
            message: expect.stringContaining("$3.00 spent of $2.50, budget.max_cost_usd"),
          },
        },
      });

      const unpriced = configWith(fake.url, { budget: { max_cost_usd: 2.5 } });
      unpriced.model = { ...unpriced.model, id: "mystery-model" };
      const refused = await oneTurn(store, unpriced, "keep going");
      expect(fake.requests).toHaveLength(3);
      expect(lastTurnEnd(refused.events)).toMatchObject({
        data: {
          reason: "blocked",
          error: { code: BUDGET_CODE, message: expect.stringContaining("set model.price") },
        },
      });
    } finally {
      await store.close();
    }
  });
});

describe("the limits' configuration", () => {
  function configError(yaml: string): ConfigError {
    const home = mkdtempSync(join(tmpdir(), "bdsh-limits-config-"));
    const cwd = join(home, "work");
    mkdirSync(cwd);
    writeFileSync(join(home, "config.yaml"), yaml);
    try {
      loadConfig({ home, cwd, env: {} });
    } catch (error) {
      if (error instanceof ConfigError) return error;
      throw error;
    }
    throw new Error("expected a ConfigError");
  }

  it("a bad value is an error naming the key and the file", () => {
    for (const [yaml, key] of [
      ["loop: { max_steps_per_turn: 0 }\n", "loop.max_steps_per_turn"],
      ["budget: { max_tokens: -5 }\n", "budget.max_tokens"],
      ["budget: { max_cost_usd: cheap }\n", "budget.max_cost_usd"],
      ["budget: { max_token: 5 }\n", "max_token"],
    ] as const) {
      const error = configError(yaml);
      expect(error.message).toContain("config.yaml");
      expect(error.message).toContain(key);
    }
  });

  it("a project's config may lower a limit, never raise or remove one", () => {
    const current = { loop: { max_steps_per_turn: 200 }, budget: { max_tokens: 1000 } };
    const raised = restrictProjectLayer(
      { loop: { max_steps_per_turn: 10_000 }, budget: { max_tokens: 5000, max_cost_usd: 1 } },
      current,
    );
    expect(raised.dropped).toEqual(["loop.max_steps_per_turn", "budget.max_tokens"]);
    expect(raised.layer).toEqual({ loop: {}, budget: { max_cost_usd: 1 } });
    const lowered = restrictProjectLayer(
      { loop: { max_steps_per_turn: 20 }, budget: { max_tokens: 10 } },
      current,
    );
    expect(lowered.dropped).toEqual([]);
  });
});
