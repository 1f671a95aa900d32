/**
 * One tool registry and one pipeline per agent (loop/agent-tools.ts): every plugin's tools are offered in
 * registration order whichever plugin comes first, unavailable ones are not, every call of every tool goes
 * through the same hooks, a tool that joins late is declared after the others (SP8), and an agent given a
 * fixed tool host refuses a plugin's tool instead of dropping it.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { Agent } from "../../src/loop/agent.js";
import { AgentTools } from "../../src/loop/agent-tools.js";
import type { Plugin } from "../../src/loop/plugin.js";
import { type ToolHost, toolCallRequest } from "../../src/loop/tool-host.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { ServiceMap } from "../../src/tools/services.js";
import type { AnyToolDefinition, ToolExec } from "../../src/tools/types.js";
import { TEST_MODEL } from "../support/test-model.js";

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const tool = (name: string, extra: Partial<AnyToolDefinition> = {}): AnyToolDefinition => ({
  name,
  toolset: "test",
  description: `the ${name} tool`,
  parameters: { type: "object", properties: {} },
  execute: async () => ({ text: `${name} ran` }),
  ...extra,
});

const registering = (name: string, tools: AnyToolDefinition[]): Plugin => ({
  name,
  setup(ctx) {
    for (const t of tools) ctx.tools.register(t, { source: name });
  },
});

async function agentWith(plugins: Plugin[], tools?: ToolHost): Promise<Agent> {
  const home = mkdtempSync(join(tmpdir(), "bdsh-agent-tools-"));
  store ??= await openStore({ home });
  const session = await store.createSession({ title: "tools" });
  return new Agent({
    store,
    sessionId: session.id,
    owner: "agent-tools-test",
    adapter: {} as never,
    model: TEST_MODEL,
    workspace: home,
    plugins,
    env: {},
    ...(tools ? { tools } : {}),
  });
}

const exec = (name: string): ToolExec => ({
  callId: `call-${name}`,
  toolName: name,
  session: { sessionId: "s", kind: "main", depth: 0 },
  workspace: "/w",
  cwd: "/w",
  sandbox: "workspace-write",
  approval: "never",
  signal: new AbortController().signal,
  concludeTurn: () => {},
  services: new ServiceMap(),
});

describe("the agent's one tool registry", () => {
  it("offers every plugin's available tools in registration order, whichever plugin is set up first", async () => {
    const first = registering("first", [tool("a"), tool("hidden", { isAvailable: () => false })]);
    const second = registering("second", [tool("b"), tool("keyed", { requiredEnv: ["UNSET_KEY"] })]);
    const late: Plugin = {
      name: "late",
      // Registered on agent/ready, after the offer: declared only when offered.
      setup(ctx) {
        ctx.hooks.onSerial("agent/ready", async () => {
          ctx.tools.register(tool("c"));
          expect(ctx.tools.declarations().map((d) => d.name)).not.toContain("c");
        });
      },
    };
    const forward = await agentWith([late, first, second]);
    await forward.setup();
    expect(forward.tools.declarations().map((d) => d.name)).toEqual(["a", "b"]);
    const backward = await agentWith([second, late, first]);
    await backward.setup();
    expect(backward.tools.declarations().map((d) => d.name)).toEqual(["b", "a"]);
  });

  it("runs every tool through the same hooks; one that joins late is declared after the others (SP8)", async () => {
    const hooks = new HookBus();
    const seen: string[] = [];
    hooks.onWaterfall("tools/pre-execute", (state) => {
      seen.push(state.call.name);
      return state;
    });
    const sections: string[] = [];
    const tools = new AgentTools(hooks, (name) => sections.push(name));
    tools.register(tool("a", { promptSection: { order: 1, text: "about a" } }));
    tools.register(tool("b"));
    tools.register(tool("hidden", { isAvailable: () => false }));
    await tools.decide({
      env: {},
      services: new ServiceMap(),
      session: { sessionId: "s", kind: "main", depth: 0 },
    });
    const before = tools.declarations();
    expect(before.map((d) => d.name)).toEqual(["a", "b"]);
    expect(sections).toEqual(["a"]);

    tools.register(tool("late"));
    expect(tools.offer(["late", "a"])).toEqual(["late"]);
    const after = tools.declarations();
    expect(after.map((d) => d.name)).toEqual(["a", "b", "late"]);
    expect(after.slice(0, 2)).toEqual(before);

    const run = (name: string) => tools.run(toolCallRequest(`call-${name}`, name, "{}"), exec(name));
    expect((await run("a")).text).toBe("a ran");
    expect((await run("late")).text).toBe("late ran");
    expect((await run("hidden")).text).toBe('Error: unknown tool "hidden"');
    expect(seen).toEqual(["a", "late"]);
  });

  it("an agent given a fixed tool host refuses a plugin's tool, naming why", async () => {
    const host: ToolHost = {
      declarations: () => [],
      concurrencyOf: () => "exclusive",
      run: async () => ({ text: "x" }),
    };
    const agent = await agentWith([registering("planning", [tool("a")])], host);
    await expect(agent.setup()).rejects.toThrow("a plugin cannot add tools");
  });
});
