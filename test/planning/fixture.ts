/**
 * Planning test fixture: an agent on a real store (SQLite file, or PostgreSQL when given a URL) talking to
 * the fake provider over HTTP, with small test tools served as the `toolHost` service so the planning
 * plugins can add theirs (src/planning/tool-installer.ts).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { Agent, type AgentOptions } from "../../src/loop/agent.js";
import type { Plugin } from "../../src/loop/plugin.js";
import { createAdapter } from "../../src/model/adapter.js";
import { resolveRoute } from "../../src/model/catalog.js";
import { continuationPlugins } from "../../src/planning/continuation.js";
import { goalPlugin } from "../../src/planning/goal-plugin.js";
import { llmRetryPlugin } from "../../src/retry/llm-retry.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, type FakeScript, startFakeProvider } from "../../testing/fake-provider/index.js";
import { personaPlugin, type TestTool, testToolHost } from "../loop/harness.js";
import { TEST_MODEL } from "../support/test-model.js";

export type PlanningFixture = {
  store: Store;
  fake: FakeProvider;
  sessionId: string;
  agent: Agent;
  makeAgent(overrides?: Partial<AgentOptions>): Agent;
  events(): Promise<LogEvent[]>;
  close(): Promise<void>;
};

/** Serves test tools as the `toolHost` service (first plugin, as the tools plugin would be). */
export function testToolsPlugin(tools: Record<string, TestTool>): Plugin {
  return {
    name: "test-tools",
    setup(ctx) {
      ctx.services.set("toolHost", testToolHost(tools));
    },
  };
}

/**
 * The planning plugins as the standard preset orders them, with checks on or off, after DSH's M13/M18 retry
 * (two quick retries: an empty reply is retried on the same history before anything else).
 */
export function planningPlugins(options: { checks: boolean; maxRounds?: number }): Plugin[] {
  return [
    llmRetryPlugin({ maxRetries: 2, initialDelayMs: 1, maxDelayMs: 2, jitterRatio: 0 }),
    goalPlugin({ max_rounds: options.maxRounds ?? 256, blocked_min_rounds: 3 }),
    ...(options.checks ? continuationPlugins(DEFAULT_CONFIG.continuation) : []),
  ];
}

export async function planningFixture(options: {
  script: FakeScript;
  tools?: Record<string, TestTool>;
  plugins?: Plugin[];
  databaseUrl?: string;
  home?: string;
}): Promise<PlanningFixture> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "bdsh-planning-"));
  const store = await openStore({
    home,
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
  });
  const fake = await startFakeProvider({ script: options.script });
  const session = await store.createSession({ title: "planning" });
  const adapter = createAdapter(resolveRoute({ provider: "deepseek", baseUrl: fake.url }, {}), {
    env: { DEEPSEEK_API_KEY: "test-key" },
  });
  const plugins = [
    personaPlugin,
    testToolsPlugin(options.tools ?? {}),
    ...(options.plugins ?? planningPlugins({ checks: true })),
  ];
  const makeAgent = (overrides: Partial<AgentOptions> = {}) =>
    new Agent({
      store,
      sessionId: session.id,
      owner: `test-${Math.random().toString(36).slice(2)}`,
      adapter,
      model: TEST_MODEL,
      plugins,
      workspace: home,
      ...overrides,
    });
  const agent = makeAgent();
  await agent.setup();
  return {
    store,
    fake,
    sessionId: session.id,
    agent,
    makeAgent,
    events: () => store.read(session.id),
    async close() {
      await fake.close();
      await store.close();
    },
  };
}

export function userMessages(events: readonly LogEvent[], source?: string): string[] {
  return events.flatMap((e) =>
    e.type === "user/message" && (source === undefined || e.data.source === source) ? [e.data.text] : [],
  );
}
