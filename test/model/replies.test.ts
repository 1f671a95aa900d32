import { afterEach, describe, expect, it } from "vitest";
import { collectReply, type ProviderName } from "../../src/model/index.js";
import { adapterFor, closeFakes, failure, fakeWith, request } from "./support.js";

afterEach(closeFakes);

const BOTH: ProviderName[] = ["deepseek", "deepseek-anthropic"];
const ask = request([{ role: "user", text: "go" }]);

describe("M13 empty responses (and §9: reasoning-only, blank)", () => {
  for (const provider of BOTH) {
    it(`${provider}: zero blocks is EMPTY_RESPONSE`, async () => {
      const fake = await fakeWith([{}]);
      expect((await failure(adapterFor(fake, provider).stream(ask))).code).toBe("EMPTY_RESPONSE");
    });

    it(`${provider}: reasoning only is EMPTY_RESPONSE, keeping the reasoning for the attempt log`, async () => {
      const fake = await fakeWith([{ reasoning: "I will now run the tests." }]);
      const error = await failure(adapterFor(fake, provider).stream(ask));
      expect(error.code).toBe("EMPTY_RESPONSE");
      expect(error.partial).toMatchObject([{ type: "reasoning", text: "I will now run the tests." }]);
    });

    it(`${provider}: whitespace-only text is EMPTY_RESPONSE`, async () => {
      const fake = await fakeWith([{ text: " \n\t " }]);
      expect((await failure(adapterFor(fake, provider).stream(ask))).code).toBe("EMPTY_RESPONSE");
    });
  }
});

describe("M14 truncation at max_tokens", () => {
  for (const [provider, finish] of [
    ["deepseek", "length"],
    ["deepseek-anthropic", "max_tokens"],
  ] as const) {
    it(`${provider}: drops tool calls, keeps text and reasoning`, async () => {
      const fake = await fakeWith([
        {
          reasoning: "plan",
          text: "Writing the file",
          toolCalls: [{ id: "c", name: "write", arguments: '{"path":"a' }],
          finish,
        },
      ]);
      const reply = await collectReply(adapterFor(fake, provider).stream(ask));
      expect(reply.finish).toBe("max-tokens");
      expect(reply.droppedToolCalls).toBe(1);
      expect(reply.blocks.map((b) => b.type)).toEqual(["reasoning", "text"]);
    });
  }

  it("a reasoning-only reply cut at max_tokens is not EMPTY_RESPONSE: the turn ends max-tokens", async () => {
    const fake = await fakeWith([{ reasoning: "long thought", finish: "length" }]);
    const reply = await collectReply(adapterFor(fake, "deepseek").stream(ask));
    expect(reply.finish).toBe("max-tokens");
  });
});

describe("M15 malformed tool JSON in a new reply", () => {
  for (const provider of BOTH) {
    it(`${provider}: repairs what jsonrepair can repair and remembers the original`, async () => {
      const fake = await fakeWith([{ toolCalls: [{ id: "c", name: "read", arguments: "{path: 'a.ts'," }] }]);
      const reply = await collectReply(adapterFor(fake, provider).stream(ask), (part) => {
        if (part.type === "tool-call") expect(part.repairedFrom).toBe("{path: 'a.ts',");
      });
      expect(reply.blocks).toEqual([
        { type: "tool-call", id: "c", name: "read", arguments: '{"path": "a.ts"}' },
      ]);
    });

    it(`${provider}: passes unrepairable arguments on unchanged, never failing the reply`, async () => {
      const fake = await fakeWith([
        { toolCalls: [{ id: "c", name: "read", arguments: '["not", "an object"]' }] },
      ]);
      const reply = await collectReply(adapterFor(fake, provider).stream(ask));
      expect(reply.finish).toBe("tool-calls");
      expect(reply.blocks).toEqual([
        { type: "tool-call", id: "c", name: "read", arguments: '["not", "an object"]' },
      ]);
    });
  }

  it("empty arguments become {}", async () => {
    const fake = await fakeWith([{ toolCalls: [{ id: "c", name: "list", arguments: "" }] }]);
    const reply = await collectReply(adapterFor(fake, "deepseek").stream(ask));
    expect(reply.blocks).toEqual([{ type: "tool-call", id: "c", name: "list", arguments: "{}" }]);
  });
});

describe("M17 error classification over HTTP", () => {
  const cases: [number, Record<string, unknown> | string, string][] = [
    [401, { error: { message: "Authentication Fails", type: "authentication_error" } }, "AUTH"],
    [403, { error: { message: "forbidden" } }, "AUTH"],
    [402, { error: { message: "Insufficient Balance" } }, "QUOTA"],
    [429, { error: { message: "You exceeded your current quota", type: "insufficient_quota" } }, "QUOTA"],
    [429, { error: { message: "Rate limit reached" } }, "RATE_LIMIT"],
    [
      400,
      { error: { message: "This model's maximum context length is 131072 tokens" } },
      "CONTEXT_WINDOW_EXCEEDED",
    ],
    // Issue 16 item 3: real overflow replies per provider are in overflow.test.ts.
    [400, { error: { message: "Invalid value for messages" } }, "INVALID_REQUEST"],
    [413, "payload too large", "INVALID_REQUEST"],
    [500, { error: { message: "internal" } }, "SERVER"],
    [529, { error: { type: "overloaded_error", message: "Overloaded" } }, "SERVER"],
    [418, "teapot", "HTTP_418"],
  ];
  for (const [status, errorBody, code] of cases) {
    it(`${status} ${typeof errorBody === "string" ? errorBody : JSON.stringify(errorBody).slice(0, 50)} → ${code}`, async () => {
      const fake = await fakeWith([{ status, body: errorBody }]);
      const error = await failure(adapterFor(fake, "openai").stream(ask));
      expect(error.code).toBe(code);
      expect(error.status).toBe(status);
    });
  }

  it("Retry-After in seconds and as an HTTP date becomes retryAfterMs", async () => {
    const date = new Date(Date.now() + 5_000).toUTCString();
    const fake = await fakeWith([
      { status: 429, headers: { "retry-after": "2" } },
      { status: 503, headers: { "retry-after": date } },
    ]);
    expect((await failure(adapterFor(fake, "deepseek").stream(ask))).retryAfterMs).toBe(2000);
    const fromDate = (await failure(adapterFor(fake, "deepseek").stream(ask))).retryAfterMs ?? 0;
    expect(fromDate).toBeGreaterThan(3000);
    expect(fromDate).toBeLessThanOrEqual(5000);
  });

  it("an in-band error chunk on the OpenAI wire is classified", async () => {
    const raw = `data: ${JSON.stringify({ error: { message: "Rate limit exceeded", type: "rate_limit_error" } })}\n\n`;
    const fake = await fakeWith([{ raw }]);
    expect((await failure(adapterFor(fake, "openrouter").stream(ask))).code).toBe("RATE_LIMIT");
  });

  it("a malformed frame is MALFORMED_RESPONSE", async () => {
    const fake = await fakeWith([{ text: "hello", fault: { kind: "malformed", afterFrames: 2 } }]);
    expect((await failure(adapterFor(fake, "deepseek").stream(ask))).code).toBe("MALFORMED_RESPONSE");
  });

  it("a dropped connection mid-stream is TRANSPORT with the partial output", async () => {
    const fake = await fakeWith([
      { text: "hello there", chunkSize: 5, fault: { kind: "drop", afterFrames: 2 } },
    ]);
    const error = await failure(adapterFor(fake, "deepseek").stream(ask));
    expect(error.code).toBe("TRANSPORT");
    expect(error.partial).toEqual([{ type: "text", text: "hello" }]);
  });

  it("a refused connection is TRANSPORT", async () => {
    const fake = await fakeWith([]);
    const adapter = adapterFor(fake, "deepseek");
    await fake.close();
    expect((await failure(adapter.stream(ask))).code).toBe("TRANSPORT");
  });

  it("a missing key is AUTH naming the variable, before any request", async () => {
    const fake = await fakeWith([{ text: "x" }]);
    const { createAdapter } = await import("../../src/model/index.js");
    const { routeTo } = await import("./support.js");
    const adapter = createAdapter(routeTo(fake, "together"), { env: {} });
    const error = await failure(adapter.stream(ask));
    expect(error.code).toBe("AUTH");
    expect(error.message).toContain("TOGETHER_API_KEY");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("M19 idle watchdog and cancellation", () => {
  it("silence past the idle timeout is TIMEOUT", async () => {
    const fake = await fakeWith([{ text: "slow", fault: { kind: "stall", afterFrames: 1 } }]);
    const error = await failure(adapterFor(fake, "deepseek", { idleTimeoutMs: 200 }).stream(ask));
    expect(error.code).toBe("TIMEOUT");
  });

  it("a pause shorter than the idle timeout is fine: there is no total deadline", async () => {
    // M19: 20 frames 60 ms apart outlast the 1 s timeout in total, while each pause stays far under it (a
    // 200 ms timeout was crossed by a single pause on a loaded machine).
    const text = "a b c d e f g h i j";
    const fake = await fakeWith([{ text, chunkSize: 1, frameDelayMs: 60 }]);
    const reply = await collectReply(adapterFor(fake, "deepseek", { idleTimeoutMs: 1_000 }).stream(ask));
    expect(reply.blocks).toEqual([{ type: "text", text }]);
  });

  it("the caller's abort is ABORTED, not TIMEOUT", async () => {
    const fake = await fakeWith([{ text: "slow", fault: { kind: "stall", afterFrames: 1 } }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const stream = adapterFor(fake, "deepseek", { idleTimeoutMs: 5_000 }).stream({
      ...ask,
      signal: controller.signal,
    });
    expect((await failure(stream)).code).toBe("ABORTED");
  });
});
