import { afterEach, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import type { Plugin } from "../../src/loop/plugin.js";
import {
  PromptRegistry,
  PromptTemplateError,
  RUNTIME_CONTEXT_HEADER,
  RUNTIME_CONTEXT_NONE,
  runtimeContextMessage,
} from "../../src/loop/prompt.js";
import { modelSwitchNotice } from "../../src/loop/request-builder.js";
import { testModel } from "../support/test-model.js";
import { type LoopFixture, loopFixture, testToolsPlugin } from "./harness.js";

let fixture: LoopFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe("SP1 section registry", () => {
  it("orders sections by order then name, drops empty ones and interpolates strictly", () => {
    const prompt = new PromptRegistry();
    prompt.setVariable("model", "deepseek-flash");
    prompt.addSection({ name: "b", order: 10, text: "second" });
    prompt.addSection({ name: "a", order: 10, text: "first on {{model}}" });
    prompt.addSection({ name: "z", order: -5, text: "top" });
    prompt.addSection({ name: "empty", order: 0, text: "  " });
    prompt.addSection({ name: "bash-only", order: 1000, text: "about bash", visibleWith: "bash" });
    expect(prompt.renderSystem(new Set())).toBe("top\n\nfirst on deepseek-flash\n\nsecond");
    expect(prompt.renderSystem(new Set(["bash"]))).toContain("about bash");
  });

  it("renders a section added, replaced or removed after an earlier render in its place", () => {
    const prompt = new PromptRegistry();
    prompt.addSection({ name: "b", order: 10, text: "b" });
    expect(prompt.renderSystem(new Set())).toBe("b");
    prompt.addSection({ name: "a", order: 5, text: "a" });
    expect(prompt.renderSystem(new Set())).toBe("a\n\nb");
    prompt.addSection({ name: "a", order: 20, text: "a moved" });
    expect(prompt.renderSystem(new Set())).toBe("b\n\na moved");
    prompt.removeSection("b");
    expect(prompt.renderSystem(new Set())).toBe("a moved");
  });

  it("orders runtime contexts, also one added after a snapshot, and skips the empty ones", () => {
    const prompt = new PromptRegistry();
    expect(prompt.renderRuntimeContext()).toBeUndefined();
    prompt.addContext({ name: "late", order: 20, render: () => "Late." });
    prompt.addContext({ name: "none", order: 5, render: () => "  " });
    expect(prompt.renderRuntimeContext()).toBe(`${RUNTIME_CONTEXT_HEADER}\n\nLate.`);
    prompt.addContext({ name: "early", order: 10, render: () => "Early." });
    expect(prompt.renderRuntimeContext()).toBe(`${RUNTIME_CONTEXT_HEADER}\n\nEarly.\n\nLate.`);
  });

  it("throws on an unknown variable (SP1)", () => {
    const prompt = new PromptRegistry();
    prompt.addSection({ name: "x", order: 0, text: "hello {{nobody}}" });
    expect(() => prompt.renderSystem(new Set())).toThrow(PromptTemplateError);
  });
});

describe("L13 runtime context only on change", () => {
  it("sends a snapshot when it differs, nothing when unchanged, and the none message when it vanishes", () => {
    expect(runtimeContextMessage("A", undefined)).toBe("A");
    expect(runtimeContextMessage("A", "A")).toBeUndefined();
    expect(runtimeContextMessage("B", "A")).toBe("B");
    expect(runtimeContextMessage(undefined, "A")).toBe(RUNTIME_CONTEXT_NONE);
    expect(runtimeContextMessage(undefined, RUNTIME_CONTEXT_NONE)).toBeUndefined();
    expect(runtimeContextMessage(undefined, undefined)).toBeUndefined();
  });
});

function changingPrompt(texts: string[]): Plugin {
  let calls = 0;
  return {
    name: "changing",
    setup(ctx) {
      ctx.prompt.addSection({ name: "p", order: 0, text: () => texts[Math.min(calls++, texts.length - 1)]! });
    },
  };
}

describe("L12 system prompt reconciliation", () => {
  it("appends a changed prompt in history on routes that take it", async () => {
    fixture = await loopFixture({
      script: [{ text: "1" }, { text: "2" }],
      plugins: [changingPrompt(["v1", "v1", "v2"])],
    });
    await fixture.agent.followup("a");
    await fixture.agent.whenIdle();
    await fixture.agent.followup("b");
    await fixture.agent.whenIdle();
    const body = fixture.fake.requests[1]!.body as { messages: Array<{ role: string; content: string }> };
    expect(body.messages[0]).toMatchObject({ role: "system", content: "v1" });
    expect(body.messages.filter((m) => m.role === "system").map((m) => m.content)).toEqual(["v1", "v2"]);
  });

  it("rewrites node 0 on routes without in-history updates", async () => {
    fixture = await loopFixture({
      script: [{ text: "1" }, { text: "2" }],
      plugins: [changingPrompt(["v1", "v1", "v2"])],
      agent: {
        model: {
          provider: "deepseek",
          id: "m",
          effort: "high",
          contextWindow: 100_000,
          maxOutputTokens: 1000,
          systemPromptUpdate: "rewrite",
        },
      },
    });
    await fixture.agent.followup("a");
    await fixture.agent.whenIdle();
    await fixture.agent.followup("b");
    await fixture.agent.whenIdle();
    const body = fixture.fake.requests[1]!.body as { messages: Array<{ role: string; content: string }> };
    expect(body.messages.filter((m) => m.role === "system").map((m) => m.content)).toEqual(["v2"]);
  });
});

describe("L11 request header and L14 model switch", () => {
  it("logs the header once while unchanged, and announces a model switch as a user message", async () => {
    fixture = await loopFixture({ script: [{ text: "1" }, { text: "2" }, { text: "3" }] });
    await fixture.agent.followup("a");
    await fixture.agent.whenIdle();
    await fixture.agent.followup("b");
    await fixture.agent.whenIdle();
    const other = fixture.makeAgent({
      model: testModel({ id: "deepseek-pro", effort: "low" }),
    });
    await other.followup("c");
    await other.whenIdle();
    const events = await fixture.events();
    const headers = events.filter((e): e is LogEvent<"request/header"> => e.type === "request/header");
    expect(headers.map((h) => h.data.model)).toEqual(["deepseek-flash", "deepseek-pro"]);
    // M5: effort is fixed per session unless this run chose one; a new model takes the run's.
    expect(headers[1]!.data.effort).toBe("low");
    const notice = events.find(
      (e): e is LogEvent<"user/message"> => e.type === "user/message" && e.data.source === "model-switch",
    );
    expect(notice?.data.text).toBe(modelSwitchNotice("deepseek-flash", "deepseek-pro"));
  });

  it("names the declared tools by one hash: the same for agents offering the same tools, another when one joins", async () => {
    const tools = { alpha: { run: async () => ({ text: "a" }) }, beta: { run: async () => ({ text: "b" }) } };
    fixture = await loopFixture({
      script: [{ text: "1" }, { text: "2" }, { text: "3" }],
      registry: true,
      tools,
    });
    const gamma: Plugin = testToolsPlugin({ gamma: { run: async () => ({ text: "c" }) } });
    await fixture.agent.followup("a");
    await fixture.agent.whenIdle();
    // Each agent of the session in turn: one with a tool more, then one with the first's tools again.
    const wider = fixture.makeAgent({ plugins: [testToolsPlugin(tools), gamma] });
    await wider.followup("b");
    await wider.whenIdle();
    const same = fixture.makeAgent({ plugins: [testToolsPlugin(tools)] });
    await same.followup("c");
    await same.whenIdle();
    const headers = (await fixture.events()).filter(
      (e): e is LogEvent<"request/header"> => e.type === "request/header",
    );
    const hashes = headers.map((h) => h.data.toolsHash);
    expect(hashes).toHaveLength(3);
    expect(hashes[1]).not.toBe(hashes[0]);
    expect(hashes[2]).toBe(hashes[0]);
  });

  it("keeps the session's logged effort when the run did not choose one (M5)", async () => {
    fixture = await loopFixture({ script: [{ text: "1" }, { text: "2" }] });
    await fixture.agent.followup("a");
    await fixture.agent.whenIdle();
    const later = fixture.makeAgent({
      model: testModel({ effort: "max" }),
    });
    await later.followup("b");
    await later.whenIdle();
    const second = fixture.fake.requests[1]!.body as { reasoning_effort?: string };
    const first = fixture.fake.requests[0]!.body as { reasoning_effort?: string };
    expect(second.reasoning_effort).toBe(first.reasoning_effort);
  });
});
