/**
 * Loop test fixture: a real store (SQLite file or PostgreSQL), the fake provider over HTTP, a deepseek
 * adapter pointed at it, and small test tools.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LogEvent } from "../../src/log/events.js";
import { Agent, type AgentOptions } from "../../src/loop/agent.js";
import type { Plugin } from "../../src/loop/plugin.js";
import { ABORTED_BEFORE_DISPATCH_TEXT } from "../../src/loop/recovery.js";
import type { ToolHost } from "../../src/loop/tool-host.js";
import { createAdapter } from "../../src/model/adapter.js";
import { resolveRoute } from "../../src/model/catalog.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { ConcurrencyClass, ToolExec, ToolOutput } from "../../src/tools/types.js";
import { type FakeProvider, type FakeScript, startFakeProvider } from "../../testing/fake-provider/index.js";
import { TEST_MODEL } from "../support/test-model.js";

export type TestTool = {
  concurrency?: ConcurrencyClass;
  /** L17: starts without waiting for the log's flush. */
  readOnly?: boolean;
  run(args: Record<string, unknown>, exec: ToolExec): Promise<ToolOutput> | ToolOutput;
};

export function testToolHost(tools: Record<string, TestTool>): ToolHost {
  return {
    declarations: () =>
      Object.keys(tools).map((name) => ({
        name,
        description: `test tool ${name}`,
        parameters: { type: "object", properties: {} },
      })),
    concurrencyOf: (call) => tools[call.name]?.concurrency ?? "exclusive",
    isReadOnly: (call) => tools[call.name]?.readOnly === true,
    async run(call, exec) {
      const tool = tools[call.name];
      if (!tool) return { text: `Error: unknown tool "${call.name}"`, isError: true };
      if (exec.signal.aborted) return { text: ABORTED_BEFORE_DISPATCH_TEXT, isError: true };
      try {
        return await tool.run(call.args ?? {}, exec);
      } catch (error) {
        return { text: `Error: ${(error as Error).message}`, isError: true };
      }
    },
  };
}

/**
 * The same test tools as definitions in the agent's own registry (declared alike), for tests whose plugins
 * register tools of their own (planning, subagents): the calls go through the agent's pipeline.
 */
export function testToolsPlugin(tools: Record<string, TestTool>): Plugin {
  return {
    name: "test-tools",
    setup(ctx) {
      for (const [name, tool] of Object.entries(tools)) {
        ctx.tools.register({
          name,
          toolset: "test",
          description: `test tool ${name}`,
          parameters: { type: "object", properties: {} },
          ...(tool.concurrency ? { concurrency: tool.concurrency } : {}),
          ...(tool.readOnly ? { readOnly: true } : {}),
          execute: async (args, exec) => tool.run(args, exec),
        });
      }
    },
  };
}

/** A one-section system prompt, so node 0 exists (SP1 interpolation included). */
export const personaPlugin: Plugin = {
  name: "test-persona",
  setup(ctx) {
    ctx.prompt.addSection({ name: "persona", order: 0, text: "You are a test agent running {{model}}." });
  },
};

export type LoopFixture = {
  store: Store;
  fake: FakeProvider;
  sessionId: string;
  agent: Agent;
  makeAgent(overrides?: Partial<AgentOptions>): Agent;
  events(): Promise<LogEvent[]>;
  close(): Promise<void>;
};

export async function loopFixture(options: {
  script: FakeScript;
  tools?: Record<string, TestTool>;
  /**
   * The test tools in the agent's own registry (`testToolsPlugin` first) instead of a fixed tool host: for
   * plugins that register tools of their own.
   */
  registry?: boolean;
  plugins?: Plugin[];
  databaseUrl?: string;
  agent?: Partial<AgentOptions>;
  home?: string;
}): Promise<LoopFixture> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "bdsh-loop-"));
  const store = await openStore({
    home,
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
  });
  const fake = await startFakeProvider({ script: options.script });
  const session = await store.createSession({ title: "test" });
  const route = resolveRoute({ provider: "deepseek", baseUrl: fake.url }, {});
  const adapter = createAdapter(route, { env: { DEEPSEEK_API_KEY: "test-key" } });
  const makeAgent = (overrides: Partial<AgentOptions> = {}) =>
    new Agent({
      store,
      sessionId: session.id,
      owner: `test-${Math.random().toString(36).slice(2)}`,
      adapter,
      model: TEST_MODEL,
      ...(options.registry
        ? { plugins: [testToolsPlugin(options.tools ?? {}), ...(options.plugins ?? [personaPlugin])] }
        : { tools: testToolHost(options.tools ?? {}), plugins: options.plugins ?? [personaPlugin] }),
      workspace: home,
      ...options.agent,
      ...overrides,
    });
  const agent = makeAgent();
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

export function types(events: LogEvent[]): string[] {
  return events.map((e) => e.type);
}
