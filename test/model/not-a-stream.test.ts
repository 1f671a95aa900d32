/**
 * Issue 16 item 5: a 200 that is not an event stream (an HTML page, a non-streaming JSON reply, an empty
 * body) was retried six times and reported as "stream ended without finish_reason". It is now one attempt,
 * MALFORMED_RESPONSE (not retryable), naming the content type received; on both wire formats.
 */
import { afterEach, describe, expect, it } from "vitest";
import { callWithRetry, type ProviderName } from "../../src/model/index.js";
import { LlmError } from "../../src/model/types.js";
import type { FakeReply } from "../../testing/fake-provider/index.js";
import { adapterFor, closeFakes, failure, fakeWith, request, TEST_KEY } from "./support.js";

afterEach(closeFakes);

const ask = request([{ role: "user", text: "go" }]);
const noWait = async (): Promise<void> => {};

const HTML = "<!DOCTYPE html><html><head><title>Sign in</title></head><body>Welcome</body></html>";
const NON_STREAM: Record<string, string> = {
  "openai-chat": JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
  }),
  anthropic: JSON.stringify({
    id: "msg_1",
    type: "message",
    role: "assistant",
    content: [{ type: "text", text: "Hi" }],
    stop_reason: "end_turn",
    usage: { input_tokens: 5, output_tokens: 1 },
  }),
};

const WIRES: [ProviderName, "openai-chat" | "anthropic"][] = [
  ["deepseek", "openai-chat"],
  ["deepseek-anthropic", "anthropic"],
];

async function once(provider: ProviderName, reply: FakeReply) {
  const fake = await fakeWith(() => reply);
  let caught: unknown;
  try {
    await callWithRetry({ adapter: adapterFor(fake, provider), request: ask, sleep: noWait });
  } catch (error) {
    caught = error;
  }
  if (!(caught instanceof LlmError)) throw new Error(`expected an LlmError, got ${String(caught)}`);
  return { error: caught, requests: fake.requests.length };
}

describe("issue 16 item 5: a 200 that is not an event stream", () => {
  for (const [provider, wire] of WIRES) {
    it(`${provider}: an HTML page is one attempt, MALFORMED_RESPONSE naming text/html`, async () => {
      const { error, requests } = await once(provider, {
        headers: { "content-type": "text/html; charset=utf-8" },
        raw: HTML,
      });
      expect(requests).toBe(1);
      expect(error.code).toBe("MALFORMED_RESPONSE");
      expect(error.message).toContain("200 with text/html; charset=utf-8, not an event stream");
      expect(error.message).toContain("HTML page");
      expect(error.message).toContain("<title>Sign in</title>");
    });

    it(`${provider}: a non-streaming JSON reply is one attempt, MALFORMED_RESPONSE naming application/json`, async () => {
      const { error, requests } = await once(provider, {
        headers: { "content-type": "application/json" },
        raw: NON_STREAM[wire]!,
      });
      expect(requests).toBe(1);
      expect(error.code).toBe("MALFORMED_RESPONSE");
      expect(error.message).toContain("200 with application/json, not an event stream");
      expect(error.message).toContain("ignores stream: true");
    });

    it(`${provider}: an empty 200 is one attempt, MALFORMED_RESPONSE saying the body was empty`, async () => {
      const { error, requests } = await once(provider, { headers: { "content-type": "" }, raw: "" });
      expect(requests).toBe(1);
      expect(error.code).toBe("MALFORMED_RESPONSE");
      expect(error.message).toContain("200 with no content type, not an event stream");
      expect(error.message).toContain("the body was empty");
      expect(error.message).not.toContain("finish_reason");
    });

    it(`${provider}: a JSON error object in a 200 is classified like the provider's error (overflow → C10)`, async () => {
      // llama.cpp before ggml-org/llama.cpp#16486 answered a streaming overflow with 200 and a JSON error.
      const body = {
        error: {
          code: 400,
          message: "the request exceeds the available context size, try increasing it",
          type: "exceed_context_size_error",
        },
      };
      const fake = await fakeWith([
        { headers: { "content-type": "application/json" }, raw: JSON.stringify(body) },
      ]);
      const error = await failure(adapterFor(fake, provider).stream(ask));
      expect(error.code).toBe("CONTEXT_WINDOW_EXCEEDED");
      expect(error.message).toContain("application/json");
    });
  }

  it("a 204 (no body at all) is one attempt, MALFORMED_RESPONSE", async () => {
    const { error, requests } = await once("deepseek", { status: 204, raw: "" });
    expect(requests).toBe(1);
    expect(error.code).toBe("MALFORMED_RESPONSE");
    expect(error.message).toContain("the provider answered 204 with");
  });

  it("an event stream sent under another content type is still read as one", async () => {
    const frames = [
      { choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: null }] },
      { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    ];
    const raw = `${frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join("")}data: [DONE]\n\n`;
    const fake = await fakeWith([{ headers: { "content-type": "text/plain" }, raw }]);
    const reply = await callWithRetry({ adapter: adapterFor(fake, "deepseek"), request: ask, sleep: noWait });
    expect(reply.blocks).toEqual([{ type: "text", text: "Hi" }]);
  });

  // Issue 14 finding 4 on this new path: the error quotes the start of the body, and a hostile or broken
  // endpoint may echo the request's credentials in it.
  for (const [provider] of WIRES) {
    it(`${provider}: a body that echoes the API key is quoted with the key redacted`, async () => {
      const { error } = await once(provider, {
        headers: { "content-type": "text/html" },
        raw: `<html><body>Bearer ${TEST_KEY} is not allowed here</body></html>`,
      });
      expect(error.code).toBe("MALFORMED_RESPONSE");
      expect(error.message).toContain("is not allowed here");
      expect(error.message).not.toContain(TEST_KEY);
    });
  }
});
