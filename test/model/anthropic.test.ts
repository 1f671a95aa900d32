import { afterEach, describe, expect, it } from "vitest";
import type { SurfaceMessage } from "../../src/log/messages.js";
import { collectReply } from "../../src/model/index.js";
import { adapterFor, body, closeFakes, drain, failure, fakeWith, request, TEST_KEY } from "./support.js";

afterEach(closeFakes);

type WireMessage = { role: string; content: unknown };
const messagesOf = (b: Record<string, unknown>): WireMessage[] => b.messages as WireMessage[];

const EVENT = (type: string, payload: Record<string, unknown>): string =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;

describe("M1 Anthropic Messages headers and endpoint", () => {
  it("posts to {base}/v1/messages with anthropic-version and x-api-key", async () => {
    const fake = await fakeWith([{ text: "hi" }]);
    await drain(adapterFor(fake, "deepseek-anthropic").stream(request([{ role: "user", text: "x" }])));
    const received = fake.requests[0]!;
    expect(received.path).toBe("/anthropic/v1/messages");
    expect(received.headers["anthropic-version"]).toBe("2023-06-01");
    expect(received.headers["x-api-key"]).toBe(TEST_KEY);
    expect(received.headers.authorization).toBeUndefined();
  });
});

describe("M3 Anthropic request body", () => {
  it("sends thinking and output_config for effort, tools with input_schema, nothing forbidden", async () => {
    const fake = await fakeWith([{ text: "a" }, { text: "b" }]);
    const adapter = adapterFor(fake, "deepseek-anthropic");
    await drain(adapter.stream(request([{ role: "user", text: "x" }], { effort: "max", maxTokens: 4000 })));
    await drain(adapter.stream(request([{ role: "user", text: "x" }], { effort: "off", temperature: 0 })));
    const on = body(fake, 0);
    expect(on).toMatchObject({
      model: "test-model",
      stream: true,
      max_tokens: 4000,
      thinking: { type: "enabled" },
      output_config: { effort: "max" },
      system: "You are a careful agent.",
    });
    expect(on.tools).toEqual([
      {
        name: "read",
        description: "Read a file.",
        input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      },
    ]);
    for (const key of ["tool_choice", "top_p", "top_k", "temperature"]) expect(on).not.toHaveProperty(key);
    const off = body(fake, 1);
    expect(off.thinking).toEqual({ type: "disabled" });
    expect(off).not.toHaveProperty("output_config");
    expect(off.temperature).toBe(0);
  });

  it("anthropic preset: budgeted thinking below the output cap", async () => {
    const fake = await fakeWith([{ text: "a" }]);
    await drain(
      adapterFor(fake, "anthropic").stream(request([{ role: "user", text: "x" }], { maxTokens: 8000 })),
    );
    expect(body(fake, 0).thinking).toEqual({ type: "enabled", budget_tokens: 6976 });
    expect(fake.requests[0]?.path).toBe("/v1/messages");
  });
});

describe("M7 system prompt placement", () => {
  const history: SurfaceMessage[] = [
    { role: "system", text: "Project rules." },
    { role: "user", text: "1" },
    { role: "assistant", blocks: [{ type: "text", text: "one" }] },
    { role: "user", text: "2" },
    { role: "system", text: "Updated rules." },
  ];

  it("in-history route: leading system joined at the top, later one in place after the user turn", async () => {
    const fake = await fakeWith([{ text: "a" }]);
    await drain(adapterFor(fake, "deepseek-anthropic").stream(request(history)));
    const b = body(fake, 0);
    expect(b.system).toBe("You are a careful agent.\n\nProject rules.");
    expect(messagesOf(b).map((m) => m.role)).toEqual(["user", "assistant", "user", "system"]);
    expect(messagesOf(b)[3]).toEqual({ role: "system", content: "Updated rules." });
  });

  it("rewrite route: later system text joins the top-level system", async () => {
    const fake = await fakeWith([{ text: "a" }]);
    await drain(adapterFor(fake, "anthropic").stream(request(history)));
    const b = body(fake, 0);
    expect(b.system).toBe("You are a careful agent.\n\nProject rules.\n\nUpdated rules.");
    expect(messagesOf(b).map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  });

  it("refuses an in-history update that follows an assistant turn", async () => {
    const fake = await fakeWith([{ text: "a" }]);
    const bad: SurfaceMessage[] = [
      { role: "user", text: "1" },
      { role: "assistant", blocks: [{ type: "text", text: "one" }] },
      { role: "system", text: "late" },
    ];
    const error = await failure(adapterFor(fake, "deepseek-anthropic").stream(request(bad)));
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.message).toBe("system update without a preceding user or tool-result turn");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("M8 message conversion", () => {
  it("tool results become tool_result blocks first in one merged user message", async () => {
    const fake = await fakeWith([{ text: "a" }]);
    const history: SurfaceMessage[] = [
      { role: "user", text: "go" },
      {
        role: "assistant",
        blocks: [
          { type: "text", text: "" },
          { type: "tool-call", id: "t1", name: "read", arguments: '{"path":"a"}' },
          { type: "tool-call", id: "t2", name: "read", arguments: "not json" },
        ],
      },
      { role: "tool", callId: "t1", name: "read", text: "A" },
      { role: "tool", callId: "t2", name: "read", text: "Error: bad", isError: true },
      { role: "user", text: "also this" },
    ];
    await drain(adapterFor(fake, "anthropic").stream(request(history)));
    expect(messagesOf(body(fake, 0))).toEqual([
      { role: "user", content: [{ type: "text", text: "go" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "t1", name: "read", input: { path: "a" } },
          { type: "tool_use", id: "t2", name: "read", input: {} }, // M9
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "A" },
          { type: "tool_result", tool_use_id: "t2", content: "Error: bad", is_error: true },
          { type: "text", text: "also this" },
        ],
      },
    ]);
  });
});

describe("M6 thinking signatures", () => {
  const history = (provider: string, model: string): SurfaceMessage[] => [
    { role: "user", text: "1" },
    {
      role: "assistant",
      provider,
      model,
      blocks: [
        { type: "reasoning", text: "secret plan", signature: "SIG" },
        { type: "reasoning", text: "", redacted: "REDACTED" },
        { type: "text", text: "one" },
      ],
    },
    { role: "user", text: "2" },
  ];

  it("re-attaches signature and redacted thinking for the same provider and model", async () => {
    const fake = await fakeWith([{ text: "a" }]);
    await drain(adapterFor(fake, "anthropic").stream(request(history("anthropic", "test-model"))));
    expect(messagesOf(body(fake, 0))[1]?.content).toEqual([
      { type: "thinking", thinking: "secret plan", signature: "SIG" },
      { type: "redacted_thinking", data: "REDACTED" },
      { type: "text", text: "one" },
    ]);
  });

  it("sends bare text to another model on DeepSeek, and drops it on Anthropic", async () => {
    const fake = await fakeWith([{ text: "a" }, { text: "b" }]);
    await drain(adapterFor(fake, "deepseek-anthropic").stream(request(history("anthropic", "other"))));
    await drain(adapterFor(fake, "anthropic").stream(request(history("anthropic", "other"))));
    expect(messagesOf(body(fake, 0))[1]?.content).toEqual([
      { type: "thinking", thinking: "secret plan" },
      { type: "text", text: "one" },
    ]);
    expect(messagesOf(body(fake, 1))[1]?.content).toEqual([{ type: "text", text: "one" }]);
  });

  it("streams thinking with its signature into a reasoning block", async () => {
    const fake = await fakeWith([{ reasoning: "hmm", signature: "S1", text: "yes" }]);
    const adapter = adapterFor(fake, "anthropic");
    const reply = await collectReply(adapter.stream(request([{ role: "user", text: "x" }])));
    expect(reply.blocks).toEqual([
      { type: "reasoning", text: "hmm", signature: "S1" },
      { type: "text", text: "yes" },
    ]);
  });
});

describe("M11 strict Anthropic assembly", () => {
  it("a frame whose type differs from its event is MALFORMED_RESPONSE", async () => {
    const raw = `event: message_start\ndata: ${JSON.stringify({ type: "ping" })}\n\n`;
    const fake = await fakeWith([{ raw }]);
    const error = await failure(adapterFor(fake, "anthropic").stream(request([{ role: "user", text: "x" }])));
    expect(error.code).toBe("MALFORMED_RESPONSE");
  });

  it("a delta that does not fit its block is MALFORMED_RESPONSE", async () => {
    const raw =
      EVENT("message_start", { message: { usage: { input_tokens: 1 } } }) +
      EVENT("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) +
      EVENT("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: "{" } });
    const fake = await fakeWith([{ raw }]);
    const error = await failure(adapterFor(fake, "anthropic").stream(request([{ role: "user", text: "x" }])));
    expect(error.code).toBe("MALFORMED_RESPONSE");
  });

  it("EOF before message_stop is STREAM_CLOSED with the partial output", async () => {
    const fake = await fakeWith([{ text: "half an answer", finish: null }]);
    const error = await failure(adapterFor(fake, "anthropic").stream(request([{ role: "user", text: "x" }])));
    expect(error.code).toBe("STREAM_CLOSED");
    expect(error.partial).toEqual([{ type: "text", text: "half an answer" }]);
  });

  it("a tool call without an id gets call-<index>; usage comes before finish", async () => {
    const fake = await fakeWith([{ toolCalls: [{ name: "read", arguments: { path: "x" } }] }]);
    const parts = await drain(adapterFor(fake, "anthropic").stream(request([{ role: "user", text: "x" }])));
    expect(parts.map((p) => p.type)).toEqual(["tool-call", "usage", "finish"]);
    expect(parts[0]).toMatchObject({ id: "call-0", name: "read", arguments: '{"path":"x"}' });
  });

  it("an in-band error event is classified (M17)", async () => {
    const raw =
      EVENT("message_start", { message: { usage: {} } }) +
      EVENT("error", { error: { type: "overloaded_error", message: "Overloaded" } });
    const fake = await fakeWith([{ raw }]);
    const error = await failure(adapterFor(fake, "anthropic").stream(request([{ role: "user", text: "x" }])));
    expect(error.code).toBe("SERVER");
  });
});

describe("M12 stop-reason mapping", () => {
  const cases: [string, string][] = [
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["max_tokens", "max-tokens"],
  ];
  for (const [wire, finish] of cases) {
    it(`${wire} → ${finish}`, async () => {
      const fake = await fakeWith([{ text: "t", finish: wire }]);
      const reply = await collectReply(
        adapterFor(fake, "anthropic").stream(request([{ role: "user", text: "x" }])),
      );
      expect(reply.finish).toBe(finish);
    });
  }

  it("tool_use → tool-calls", async () => {
    const fake = await fakeWith([{ toolCalls: [{ id: "t", name: "read", arguments: {} }] }]);
    const reply = await collectReply(
      adapterFor(fake, "anthropic").stream(request([{ role: "user", text: "x" }])),
    );
    expect(reply.finish).toBe("tool-calls");
  });

  for (const reason of ["refusal", "pause_turn"]) {
    it(`${reason} is MALFORMED_RESPONSE`, async () => {
      const fake = await fakeWith([{ text: "t", finish: reason }]);
      const error = await failure(
        adapterFor(fake, "anthropic").stream(request([{ role: "user", text: "x" }])),
      );
      expect(error.code).toBe("MALFORMED_RESPONSE");
    });
  }
});

describe("M20 usage (Anthropic wire)", () => {
  it("keeps input, cache read, cache write and output disjoint", async () => {
    const fake = await fakeWith([
      { text: "x", usage: { input: 7, cacheRead: 100, cacheWrite: 20, output: 9 } },
    ]);
    const reply = await collectReply(
      adapterFor(fake, "anthropic").stream(request([{ role: "user", text: "x" }])),
    );
    expect(reply.usage).toEqual({
      inputTokens: 7,
      cacheReadTokens: 100,
      cacheWriteTokens: 20,
      outputTokens: 9,
    });
  });
});
