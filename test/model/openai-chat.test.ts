import { afterEach, describe, expect, it } from "vitest";
import type { AssistantMessage, SurfaceMessage } from "../../src/log/messages.js";
import { collectReply, type ModelPart, PRESETS, PROVIDER_NAMES } from "../../src/model/index.js";
import { adapterFor, body, closeFakes, drain, failure, fakeWith, request, TEST_KEY } from "./support.js";

afterEach(closeFakes);

type WireMessage = Record<string, unknown> & { role: string };
const messagesOf = (b: Record<string, unknown>): WireMessage[] => b.messages as WireMessage[];

describe("acceptance: DeepSeek two-step tool conversation on the wire", () => {
  it("passes reasoning back, fills reasoning_content, sends strings and paired results, no forbidden fields", async () => {
    const fake = await fakeWith([
      {
        reasoning: "I should read the file first.",
        toolCalls: [
          { id: "call_a", name: "read", arguments: { path: "a.ts" } },
          { id: "call_b", name: "read", arguments: { path: "b.ts" } },
        ],
      },
      { text: "Both files are fine." },
    ]);
    const adapter = adapterFor(fake, "deepseek");
    const history: SurfaceMessage[] = [
      { role: "user", text: "hello" },
      {
        role: "assistant",
        blocks: [{ type: "text", text: "Hi. What should I check?" }],
        provider: "deepseek",
        model: "test-model",
      },
      { role: "user", text: "check a.ts and b.ts" },
    ];
    const first = await collectReply(adapter.stream(request(history)));
    expect(first.finish).toBe("tool-calls");
    const assistant: AssistantMessage = {
      role: "assistant",
      blocks: first.blocks,
      provider: adapter.provider,
      model: "test-model",
    };
    history.push(
      assistant,
      { role: "tool", callId: "call_a", name: "read", text: "export const a = 1;" },
      { role: "tool", callId: "call_b", name: "read", text: "export const b = 2;" },
    );
    const second = await collectReply(adapter.stream(request(history)));
    expect(second.blocks).toEqual([{ type: "text", text: "Both files are fine." }]);

    const wire = body(fake, 1);
    for (const forbidden of ["tool_choice", "temperature", "top_p"])
      expect(wire).not.toHaveProperty(forbidden);
    expect(wire.thinking).toEqual({ type: "enabled" });
    const messages = messagesOf(wire);
    expect(messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "tool",
      "tool",
    ]);
    // An assistant message that had no reasoning still carries the field (M26).
    expect(messages[2]).toEqual({
      role: "assistant",
      content: "Hi. What should I check?",
      reasoning_content: "",
    });
    // Reasoning passed back under the field it came in, content a string, calls in order (M6).
    expect(messages[4]).toMatchObject({
      role: "assistant",
      content: "",
      reasoning_content: "I should read the file first.",
      tool_calls: [
        { id: "call_a", type: "function", function: { name: "read", arguments: '{"path":"a.ts"}' } },
        { id: "call_b", type: "function", function: { name: "read", arguments: '{"path":"b.ts"}' } },
      ],
    });
    expect(messages.slice(5)).toEqual([
      { role: "tool", tool_call_id: "call_a", content: "export const a = 1;" },
      { role: "tool", tool_call_id: "call_b", content: "export const b = 2;" },
    ]);
    expect(fake.requests[1]?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
  });
});

describe("M3 request body", () => {
  it("streams with usage and the preset's max-tokens field, and declares tools without strict", async () => {
    const fake = await fakeWith([{ text: "ok" }, { text: "ok" }]);
    await drain(
      adapterFor(fake, "deepseek").stream(request([{ role: "user", text: "x" }], { maxTokens: 1234 })),
    );
    await drain(
      adapterFor(fake, "openai").stream(request([{ role: "user", text: "x" }], { maxTokens: 1234 })),
    );
    const deepseek = body(fake, 0);
    expect(deepseek).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 1234,
    });
    expect(deepseek.tools).toEqual([
      {
        type: "function",
        function: {
          name: "read",
          description: "Read a file.",
          parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
        },
      },
    ]);
    expect(body(fake, 1)).toMatchObject({ max_completion_tokens: 1234 });
    expect(body(fake, 1)).not.toHaveProperty("max_tokens");
  });

  it("sends temperature only when the caller set it and thinking is off", async () => {
    const fake = await fakeWith([{ text: "a" }, { text: "b" }]);
    const adapter = adapterFor(fake, "deepseek");
    await drain(adapter.stream(request([{ role: "user", text: "x" }], { temperature: 0.2, effort: "high" })));
    await drain(adapter.stream(request([{ role: "user", text: "x" }], { temperature: 0.2, effort: "off" })));
    expect(body(fake, 0)).not.toHaveProperty("temperature");
    expect(body(fake, 1)).toMatchObject({ temperature: 0.2, thinking: { type: "disabled" } });
  });
});

describe("M4/M26 reasoning switch per preset", () => {
  const cases: [(typeof PROVIDER_NAMES)[number], Record<string, unknown>, Record<string, unknown>][] = [
    [
      "deepseek",
      { thinking: { type: "enabled" }, reasoning_effort: "max" },
      { thinking: { type: "disabled" } },
    ],
    ["together", { reasoning: { enabled: true } }, { reasoning: { enabled: false } }],
    ["openai", { reasoning_effort: "high" }, {}],
    ["openrouter", { reasoning: { effort: "high" } }, { reasoning: { effort: "none" } }],
    ["openai-compatible", {}, {}],
  ];
  for (const [provider, on, off] of cases) {
    it(`${provider}: effort max and off`, async () => {
      const fake = await fakeWith([{ text: "a" }, { text: "b" }]);
      const adapter = adapterFor(fake, provider);
      await drain(adapter.stream(request([{ role: "user", text: "x" }], { effort: "max" })));
      await drain(adapter.stream(request([{ role: "user", text: "x" }], { effort: "off" })));
      const keys = ["thinking", "reasoning", "reasoning_effort"];
      const pick = (b: Record<string, unknown>) =>
        Object.fromEntries(keys.filter((k) => k in b).map((k) => [k, b[k]]));
      expect(pick(body(fake, 0))).toEqual(on);
      expect(pick(body(fake, 1))).toEqual(off);
      expect(fake.requests[0]?.path).toMatch(/\/chat\/completions$/);
    });
  }

  it("validates effort before any I/O", async () => {
    const fake = await fakeWith([{ text: "a" }]);
    const bad = request([{ role: "user", text: "x" }], { effort: "medium" as "high" });
    const error = await failure(adapterFor(fake, "deepseek").stream(bad));
    expect(error.code).toBe("INVALID_REQUEST");
    expect(fake.requests).toHaveLength(0);
  });

  it("every OpenAI-format preset is in the catalog as data", () => {
    const openAi = PROVIDER_NAMES.filter((name) => PRESETS[name].wire === "openai-chat");
    expect(openAi).toEqual(["deepseek", "together", "openai", "openrouter", "openai-compatible"]);
  });
});

describe("M6 reasoning passback", () => {
  for (const field of ["reasoning_content", "reasoning", "reasoning_text"] as const) {
    it(`reads ${field} and replays it under the same field`, async () => {
      const fake = await fakeWith([
        { reasoning: "think", reasoningField: field, text: "answer" },
        { text: "next" },
      ]);
      const adapter = adapterFor(fake, "openai-compatible");
      const reply = await collectReply(adapter.stream(request([{ role: "user", text: "q" }])));
      expect(reply.blocks).toEqual([
        { type: "reasoning", text: "think", field },
        { type: "text", text: "answer" },
      ]);
      const history: SurfaceMessage[] = [
        { role: "user", text: "q" },
        { role: "assistant", blocks: reply.blocks },
        { role: "user", text: "and?" },
      ];
      await drain(adapter.stream(request(history)));
      expect(messagesOf(body(fake, 1))[2]).toEqual({
        role: "assistant",
        content: "answer",
        [field]: "think",
      });
    });
  }

  it("replays reasoning on every later request, not only the next one", async () => {
    const fake = await fakeWith([{ text: "x" }]);
    const history: SurfaceMessage[] = [
      { role: "user", text: "1" },
      {
        role: "assistant",
        blocks: [
          { type: "reasoning", text: "plan A", field: "reasoning_content" },
          { type: "text", text: "one" },
        ],
      },
      { role: "user", text: "2" },
      { role: "assistant", blocks: [{ type: "text", text: "two" }] },
      { role: "user", text: "3" },
    ];
    await drain(adapterFor(fake, "deepseek").stream(request(history)));
    const assistants = messagesOf(body(fake, 0)).filter((m) => m.role === "assistant");
    expect(assistants.map((m) => m.reasoning_content)).toEqual(["plan A", ""]);
  });

  it("sends reasoning from the Anthropic wire under the preset's field, without signature", async () => {
    const fake = await fakeWith([{ text: "x" }]);
    const history: SurfaceMessage[] = [
      { role: "user", text: "1" },
      {
        role: "assistant",
        blocks: [
          { type: "reasoning", text: "thought", signature: "sig" },
          { type: "text", text: "one" },
        ],
      },
      { role: "user", text: "2" },
    ];
    await drain(adapterFor(fake, "together").stream(request(history)));
    expect(messagesOf(body(fake, 0))[2]).toEqual({ role: "assistant", content: "one", reasoning: "thought" });
  });
});

describe("M26 message shaping", () => {
  it("skips empty assistant messages without tool calls and sends developer messages as system", async () => {
    const fake = await fakeWith([{ text: "x" }]);
    const history: SurfaceMessage[] = [
      { role: "user", text: "1" },
      { role: "assistant", blocks: [{ type: "text", text: "" }] },
      { role: "developer", text: "The tool grep is now available." },
      { role: "user", text: "2" },
    ];
    await drain(adapterFor(fake, "openai").stream(request(history)));
    expect(messagesOf(body(fake, 0))).toEqual([
      { role: "system", content: "You are a careful agent." },
      { role: "user", content: "1" },
      { role: "system", content: "The tool grep is now available." },
      { role: "user", content: "2" },
    ]);
  });
});

describe("M9 malformed historical arguments", () => {
  it("replays arguments that are not a JSON object as {}", async () => {
    const fake = await fakeWith([{ text: "x" }]);
    const history: SurfaceMessage[] = [
      { role: "user", text: "1" },
      {
        role: "assistant",
        blocks: [{ type: "tool-call", id: "c1", name: "read", arguments: '{"path": "a' }],
      },
      { role: "tool", callId: "c1", name: "read", text: "Error: invalid arguments" },
    ];
    await drain(adapterFor(fake, "deepseek").stream(request(history)));
    const calls = messagesOf(body(fake, 0))[2]!.tool_calls as { function: { arguments: string } }[];
    const call = calls[0];
    expect(call?.function.arguments).toBe("{}");
  });
});

describe("M8 pairing check before any HTTP call", () => {
  it("refuses a history with an unanswered call and sends nothing", async () => {
    const fake = await fakeWith([{ text: "x" }]);
    const history: SurfaceMessage[] = [
      { role: "user", text: "1" },
      { role: "assistant", blocks: [{ type: "tool-call", id: "c1", name: "read", arguments: "{}" }] },
    ];
    const error = await failure(adapterFor(fake, "deepseek").stream(request(history)));
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.message).toMatch(/unresolved/);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("M11 stream assembly (OpenAI wire)", () => {
  it("assembles parallel tool calls from chunked arguments and emits them after the reply ends", async () => {
    const fake = await fakeWith([
      {
        text: "Reading both.",
        chunkSize: 2,
        toolCalls: [
          { id: "c1", name: "read", arguments: { path: "src/a.ts" } },
          { name: "read", arguments: { path: "src/ü.ts" } },
        ],
      },
    ]);
    const parts = await drain(adapterFor(fake, "deepseek").stream(request([{ role: "user", text: "go" }])));
    const kinds = parts.map((p) => p.type);
    expect(kinds.slice(-4)).toEqual(["tool-call", "tool-call", "usage", "finish"]);
    const calls = parts.filter((p): p is Extract<ModelPart, { type: "tool-call" }> => p.type === "tool-call");
    expect(calls.map((c) => [c.id, c.arguments])).toEqual([
      ["c1", '{"path":"src/a.ts"}'],
      ["call-1", '{"path":"src/ü.ts"}'],
    ]);
    const text = parts.flatMap((p) => (p.type === "text" ? [p.delta] : [])).join("");
    expect(text).toBe("Reading both.");
  });
});

describe("M26 finish mapping", () => {
  it("a stream without finish_reason is TRANSPORT (retryable)", async () => {
    const fake = await fakeWith([{ text: "partial answer", finish: null }]);
    const error = await failure(adapterFor(fake, "deepseek").stream(request([{ role: "user", text: "x" }])));
    expect(error.code).toBe("TRANSPORT");
    expect(error.partial).toEqual([{ type: "text", text: "partial answer" }]);
  });

  it("content_filter is an error", async () => {
    const fake = await fakeWith([{ text: "partial", finish: "content_filter" }]);
    const error = await failure(adapterFor(fake, "openai").stream(request([{ role: "user", text: "x" }])));
    expect(error.code).toBe("MALFORMED_RESPONSE");
  });

  it("length is max-tokens", async () => {
    const fake = await fakeWith([{ text: "cut", finish: "length" }]);
    const reply = await collectReply(
      adapterFor(fake, "openai").stream(request([{ role: "user", text: "x" }])),
    );
    expect(reply.finish).toBe("max-tokens");
  });
});

describe("M20 usage (OpenAI wire)", () => {
  it("subtracts cache hits from the prompt count", async () => {
    const fake = await fakeWith([{ text: "x", usage: { input: 19, cacheRead: 320, output: 83 } }]);
    const reply = await collectReply(
      adapterFor(fake, "deepseek").stream(request([{ role: "user", text: "x" }])),
    );
    expect(reply.usage).toEqual({
      inputTokens: 19,
      cacheReadTokens: 320,
      cacheWriteTokens: 0,
      outputTokens: 83,
    });
  });
});
