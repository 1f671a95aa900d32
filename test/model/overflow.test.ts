/**
 * Issue 16 item 3, M17/C10: every row of the overflow table (src/model/overflow.ts) is a real provider
 * reply; replayed through the fake provider and the adapter it must classify as CONTEXT_WINDOW_EXCEEDED so
 * C10 recovery runs. Near misses (real messages that are not overflow) keep the code they had.
 */
import { afterEach, describe, expect, it } from "vitest";
import { classify, isContextOverflow } from "../../src/model/errors.js";
import type { ProviderName } from "../../src/model/index.js";
import { OVERFLOW_RULES } from "../../src/model/overflow.js";
import { adapterFor, closeFakes, failure, fakeWith, request } from "./support.js";

afterEach(closeFakes);

const ask = request([{ role: "user", text: "go" }]);

function presetFor(provider: string): ProviderName {
  if (provider.startsWith("Anthropic")) return "anthropic";
  if (provider === "DeepSeek") return "deepseek";
  if (provider === "OpenRouter") return "openrouter";
  if (provider.startsWith("Together")) return "together";
  if (provider.startsWith("OpenAI")) return "openai";
  return "openai-compatible";
}

describe("M17 overflow table: each real provider reply is CONTEXT_WINDOW_EXCEEDED", () => {
  for (const rule of OVERFLOW_RULES) {
    it(`${rule.provider}: HTTP ${rule.example.status} (${rule.source.split(" ")[0]})`, async () => {
      expect(rule.source).toMatch(/^(https:\/\/github\.com\/|[\w.-]+\/[\w.-]+ )/);
      const fake = await fakeWith([{ status: rule.example.status, body: rule.example.body }]);
      const error = await failure(adapterFor(fake, presetFor(rule.provider)).stream(ask));
      expect(error.code).toBe("CONTEXT_WINDOW_EXCEEDED");
      expect(error.status).toBe(rule.example.status);
    });
  }

  it("an in-stream error frame with overflow wording is CONTEXT_WINDOW_EXCEEDED (llama.cpp streams it)", async () => {
    const frame = {
      error: {
        code: 400,
        message: "the request exceeds the available context size, try increasing it",
        type: "exceed_context_size_error",
      },
    };
    const fake = await fakeWith([{ raw: `data: ${JSON.stringify(frame)}\n\n` }]);
    const error = await failure(adapterFor(fake, "openai-compatible").stream(ask));
    expect(error.code).toBe("CONTEXT_WINDOW_EXCEEDED");
  });

  it("the 413 rule needs the 413: request_too_large in-band or without a status is not overflow", () => {
    expect(classify(413, "request_too_large Request exceeds the maximum size")).toBe(
      "CONTEXT_WINDOW_EXCEEDED",
    );
    expect(isContextOverflow("request_too_large Request exceeds the maximum size")).toBe(false);
    expect(isContextOverflow("request_too_large Request exceeds the maximum size", 413)).toBe(true);
  });
});

/** Real messages near the overflow wording that are something else; each keeps its code. */
const NEAR_MISSES: { name: string; status: number; body: unknown; code: string }[] = [
  {
    // https://github.com/ChatGPTNextWeb/NextChat/issues/4964: the output cap, not the window.
    name: "Anthropic max_tokens above the model's output limit",
    status: 400,
    body: {
      type: "error",
      error: {
        type: "invalid_request_error",
        message:
          "max_tokens: 10000 > 4096, which is the maximum allowed number of output tokens for claude-3-5-sonnet-20240620",
      },
    },
    code: "INVALID_REQUEST",
  },
  {
    // https://github.com/huggingface/transformers/issues/28523: TGI's output cap alone.
    name: "TGI max_new_tokens above its cap",
    status: 422,
    body: { error: "Input validation error: `max_new_tokens` must be <= 192. Given: 200" },
    code: "INVALID_REQUEST",
  },
  {
    // A 413 without Anthropic's type (a proxy's own limit) stays what it was.
    name: "a proxy's 413 without request_too_large",
    status: 413,
    body: "<html><head><title>413 Request Entity Too Large</title></head></html>",
    code: "INVALID_REQUEST",
  },
  {
    // OpenAI's tokens-per-minute limit says "Request too large" but is a rate limit.
    name: "OpenAI TPM 'Request too large' rate limit",
    status: 429,
    body: {
      error: {
        message:
          "Request too large for gpt-4 in organization org-abc on tokens per min (TPM): Limit 10000, Requested 20000.",
        type: "tokens",
        code: "rate_limit_exceeded",
      },
    },
    code: "RATE_LIMIT",
  },
  {
    name: "an invalid message that mentions context",
    status: 400,
    body: { error: { message: "Invalid 'messages[2].content': the context field is not allowed here." } },
    code: "INVALID_REQUEST",
  },
];

describe("M17 overflow near misses keep their code", () => {
  for (const miss of NEAR_MISSES) {
    it(`${miss.name} → ${miss.code}`, async () => {
      const body = typeof miss.body === "string" ? miss.body : JSON.stringify(miss.body);
      const fake = await fakeWith([{ status: miss.status, body }]);
      const error = await failure(adapterFor(fake, "openai-compatible").stream(ask));
      expect(error.code).toBe(miss.code);
    });
  }
});
