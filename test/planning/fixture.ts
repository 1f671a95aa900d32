/**
 * Planning test fixture: the loop fixture (real store, fake provider over HTTP) with small test tools in the
 * agent's registry beside the planning plugins' own, and the planning plugins in preset order.
 */
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import type { Plugin } from "../../src/loop/plugin.js";
import { continuationPlugins } from "../../src/planning/continuation.js";
import { goalPlugin } from "../../src/planning/goal-plugin.js";
import { llmRetryPlugin } from "../../src/retry/llm-retry.js";
import type { FakeScript } from "../../testing/fake-provider/index.js";
import {
  type LoopFixture,
  loopFixture,
  personaPlugin,
  type TestTool,
  testToolsPlugin,
} from "../loop/harness.js";

export { testToolsPlugin };

export type PlanningFixture = LoopFixture;

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
  const fixture = await loopFixture({
    script: options.script,
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
    ...(options.home ? { home: options.home } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
    registry: true,
    plugins: [personaPlugin, ...(options.plugins ?? planningPlugins({ checks: true }))],
  });
  await fixture.agent.setup();
  return fixture;
}

export function userMessages(events: readonly LogEvent[], source?: string): string[] {
  return events.flatMap((e) =>
    e.type === "user/message" && (source === undefined || e.data.source === source) ? [e.data.text] : [],
  );
}
