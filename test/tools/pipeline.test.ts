import { describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { ScriptedApprovals } from "../../src/tools/approvals.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { ToolRefusal } from "../../src/tools/refusal.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { AnyToolDefinition, ApprovalAnswer, ApprovalPolicy } from "../../src/tools/types.js";
import { call, makeExec, tempDir } from "./support.js";

const echo: AnyToolDefinition = {
  name: "echo",
  toolset: "test",
  description: "echo",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  concurrency: (args: { text: string }) => (args.text === "safe" ? "safe" : "exclusive"),
  readOnly: (args: { text: string }) => {
    if (args.text === "throw") throw new Error("cannot tell");
    return args.text === "safe";
  },
  execute: async (args: { text: string }) => ({ text: args.text }),
};

function setup(extra: AnyToolDefinition[] = []) {
  const registry = new ToolRegistry();
  registry.register(echo);
  for (const tool of extra) registry.register(tool);
  const hooks = new HookBus();
  const pipeline = new ToolPipeline({ registry, hooks, settleGraceMs: 1_000 });
  return { registry, hooks, pipeline, ctx: makeExec({ workspace: tempDir() }) };
}

describe("T2 pipeline", () => {
  it("runs pre-execute, execute wrappers, the body and post-execute in that order", async () => {
    const { hooks, pipeline, ctx } = setup();
    const order: string[] = [];
    hooks.onWaterfall("tools/pre-execute", (state) => {
      order.push("pre");
      return state;
    });
    hooks.onWrap("tools/execute", async (input, next) => {
      order.push("wrap");
      return next(input);
    });
    hooks.onWaterfall("tools/post-execute", (state) => {
      order.push(`post:${state.output.text}`);
      return state;
    });
    const output = await pipeline.run(call("echo", { text: "hi" }), ctx.exec);
    expect(output).toEqual({ text: "hi" });
    expect(order).toEqual(["pre", "wrap", "post:hi"]);
  });

  it("answers an unknown tool with T3's text", async () => {
    const { pipeline, ctx } = setup();
    expect(await pipeline.run(call("nope", {}), ctx.exec)).toMatchObject({
      text: 'Error: unknown tool "nope"',
      isError: true,
      code: "UNKNOWN_TOOL",
    });
  });

  it("answers arguments that are not an object", async () => {
    const { pipeline, ctx } = setup();
    expect((await pipeline.run(call("echo", "[1,2]"), ctx.exec)).text).toBe(
      'Error: invalid arguments: "arguments" must be an object',
    );
  });

  it("validates before the body runs", async () => {
    const { pipeline, ctx } = setup();
    expect((await pipeline.run(call("echo", { text: 1 }), ctx.exec)).text).toBe(
      'Error: invalid arguments: "text" must be a string',
    );
  });

  it("turns a throw into Error: <message>", async () => {
    const thrower: AnyToolDefinition = {
      ...echo,
      name: "thrower",
      execute: async () => Promise.reject(new Error("disk full")),
    };
    const { pipeline, ctx } = setup([thrower]);
    expect(await pipeline.run(call("thrower", { text: "" }), ctx.exec)).toMatchObject({
      text: "Error: disk full",
      isError: true,
    });
  });

  it("T3 keeps a thrown refusal's own code; any other throw is TOOL_THREW", async () => {
    const refuser: AnyToolDefinition = {
      ...echo,
      name: "refuser",
      execute: async () => Promise.reject(new ToolRefusal("LIMIT_REACHED", "no more room")),
    };
    const thrower: AnyToolDefinition = {
      ...echo,
      name: "thrower",
      execute: async () => Promise.reject(new Error("x")),
    };
    const { pipeline, ctx } = setup([refuser, thrower]);
    expect(await pipeline.run(call("refuser", { text: "" }), ctx.exec)).toMatchObject({
      text: "Error: no more room",
      isError: true,
      code: "LIMIT_REACHED",
    });
    expect(await pipeline.run(call("thrower", { text: "" }), ctx.exec)).toMatchObject({ code: "TOOL_THREW" });
  });

  it("T6 times out a declared timeout and waits for the body to settle", async () => {
    let settled = false;
    const slow: AnyToolDefinition = {
      ...echo,
      name: "slow",
      timeoutMs: 20,
      execute: (_args, exec) =>
        new Promise((resolve) =>
          exec.signal.addEventListener("abort", () => {
            settled = true;
            resolve({ text: "late" });
          }),
        ),
    };
    const { pipeline, ctx } = setup([slow]);
    expect(await pipeline.run(call("slow", { text: "" }), ctx.exec)).toMatchObject({
      text: "Error: tool call timed out after 20ms",
      code: "TOOL_TIMEOUT",
    });
    expect(settled).toBe(true);
  });

  it("T5 answers an abort before dispatch", async () => {
    const { pipeline, ctx } = setup();
    ctx.controller.abort();
    expect(await pipeline.run(call("echo", { text: "x" }), ctx.exec)).toMatchObject({
      text: "Error: tool call aborted before dispatch",
      code: "ABORTED_BEFORE_DISPATCH",
    });
  });

  it("T5 answers an abort after start", async () => {
    const { pipeline, ctx } = setup([
      {
        ...echo,
        name: "hang",
        execute: (_args, exec) => {
          queueMicrotask(() => ctx.controller.abort());
          return new Promise((resolve) =>
            exec.signal.addEventListener("abort", () => resolve({ text: "x" })),
          );
        },
      },
    ]);
    expect(await pipeline.run(call("hang", { text: "" }), ctx.exec)).toMatchObject({
      text: "Error: tool call aborted",
      code: "ABORTED",
    });
  });

  it("applies post-execute replace, block and additional contexts", async () => {
    const { hooks, pipeline, ctx } = setup();
    hooks.onWaterfall("tools/post-execute", (state) =>
      state.output.text === "secret"
        ? { ...state, action: "block" }
        : { ...state, action: "replace", output: { text: "replaced", additionalContexts: ["note"] } },
    );
    expect(await pipeline.run(call("echo", { text: "x" }), ctx.exec)).toEqual({
      text: "replaced",
      additionalContexts: ["note"],
    });
    expect((await pipeline.run(call("echo", { text: "secret" }), ctx.exec)).text).toBe(
      'Error: the result of tool "echo" was blocked',
    );
  });

  it("L19 classifies per call and fails closed", () => {
    const { pipeline } = setup();
    expect(pipeline.concurrencyOf(call("echo", { text: "safe" }))).toBe("safe");
    expect(pipeline.concurrencyOf(call("echo", { text: "other" }))).toBe("exclusive");
    expect(pipeline.concurrencyOf(call("nope", {}))).toBe("exclusive");
  });

  it("L17 read-only is per call and fails closed", () => {
    const { pipeline } = setup();
    expect(pipeline.isReadOnly(call("echo", { text: "safe" }))).toBe(true);
    expect(pipeline.isReadOnly(call("echo", { text: "other" }))).toBe(false);
    expect(pipeline.isReadOnly(call("echo", { text: "throw" }))).toBe(false);
    expect(pipeline.isReadOnly(call("nope", {}))).toBe(false);
    expect(pipeline.isReadOnly({ callId: "c", name: "echo", rawArguments: "{", args: undefined })).toBe(
      false,
    );
  });

  it("reports a deny decision as an error result", async () => {
    const { hooks, pipeline, ctx } = setup();
    hooks.onWaterfall("tools/pre-execute", (state) => ({
      ...state,
      decision: { kind: "deny", reason: "not here" },
    }));
    expect(await pipeline.run(call("echo", { text: "x" }), ctx.exec)).toMatchObject({
      text: "Error: not here",
      isError: true,
    });
  });
});

describe("T16 approval policy × answer", () => {
  const cases: [ApprovalPolicy, ApprovalAnswer | "no-channel" | "throws", string][] = [
    ["ask", "allow-once", "x"],
    ["ask", "allow-session", "x"],
    ["ask", "allow-always", "x"],
    ["ask", "deny", 'Error: the user rejected tool "echo"'],
    ["ask", "cancel", 'Error: approval for tool "echo" was cancelled'],
    ["ask", "throws", 'Error: the user rejected tool "echo"'],
    ["ask", "no-channel", 'Error: tool "echo" requires approval, but no approval channel is available'],
    ["never", "allow-once", 'Error: tool "echo" requires approval, but no approval channel is available'],
  ];
  for (const [policy, answer, expected] of cases) {
    it(`policy ${policy}, answer ${answer} → ${expected}`, async () => {
      const { hooks, pipeline, ctx } = setup();
      const approvals = new ScriptedApprovals(() => {
        if (answer === "throws") throw new Error("prompt closed");
        return answer as ApprovalAnswer;
      });
      if (answer !== "no-channel") ctx.services.set("approvals", approvals);
      const answers: string[] = [];
      hooks.onWaterfall("tools/pre-execute", (state) => ({
        ...state,
        decision: { kind: "ask", reason: "r", summary: "s", onAnswer: (a) => void answers.push(a) },
      }));
      const output = await pipeline.run(call("echo", { text: "x" }), { ...ctx.exec, approval: policy });
      expect(output.text).toBe(expected);
      expect(approvals.requests.length).toBe(policy === "never" || answer === "no-channel" ? 0 : 1);
      if (answer.startsWith("allow") && policy === "ask") expect(answers).toEqual([answer]);
    });
  }

  it("answers invalid arguments at once: no pre-execute hook runs and nobody is asked to approve", async () => {
    const { hooks, pipeline, ctx } = setup();
    const approvals = new ScriptedApprovals(() => "allow-once");
    ctx.services.set("approvals", approvals);
    let preHooks = 0;
    const seen: string[] = [];
    hooks.onWaterfall("tools/pre-execute", (state) => {
      preHooks++;
      return { ...state, decision: { kind: "ask", reason: "dangerous", summary: "rm -rf build" } };
    });
    hooks.onWaterfall("tools/post-execute", (state) => {
      seen.push(state.output.text);
      return state;
    });
    for (const args of [{ text: 1 }, "[1]"]) {
      const output = await pipeline.run(call("echo", args), { ...ctx.exec, approval: "ask" });
      expect(output).toMatchObject({ isError: true, code: "INVALID_ARGUMENTS" });
    }
    expect(preHooks).toBe(0);
    expect(approvals.requests).toEqual([]);
    // Post-execute still sees the outcome (G1 counts failed calls).
    expect(seen).toHaveLength(2);
  });

  it("passes the call id and tool name to the answerer", async () => {
    const { hooks, pipeline, ctx } = setup();
    const approvals = new ScriptedApprovals(() => "allow-once");
    ctx.services.set("approvals", approvals);
    hooks.onWaterfall("tools/pre-execute", (state) => ({
      ...state,
      decision: { kind: "ask", reason: "why", summary: "what" },
    }));
    await pipeline.run(call("echo", { text: "x" }, "call_9"), ctx.exec);
    expect(approvals.requests[0]).toMatchObject({
      tool: "echo",
      callId: "call_9",
      reason: "why",
      summary: "what",
    });
  });
});
