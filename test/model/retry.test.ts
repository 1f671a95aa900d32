import { afterEach, describe, expect, it } from "vitest";
import type { AssistantBlock } from "../../src/log/messages.js";
import { callWithRetry, LlmError, type LlmErrorCode, RetryPolicy } from "../../src/model/index.js";
import { adapterFor, closeFakes, fakeWith, request } from "./support.js";

afterEach(closeFakes);

const ask = request([{ role: "user", text: "go" }]);
const err = (code: LlmErrorCode, retryAfterMs?: number): LlmError =>
  new LlmError(code, code, retryAfterMs === undefined ? {} : { retryAfterMs });

/** Records what the loop would log, and sleeps for no time (the decided delay is what is asserted). */
function recorder() {
  const log: string[] = [];
  const attempts: { blocks: AssistantBlock[]; code: string; attempt: number }[] = [];
  const delays: number[] = [];
  return {
    log,
    attempts,
    delays,
    hooks: {
      onAttemptFailed: (blocks: AssistantBlock[], error: LlmError, attempt: number) => {
        attempts.push({ blocks, code: error.code, attempt });
        log.push(`assistant/attempt ${attempt} ${error.code}`);
      },
      onRetry: (attempt: number, delayMs: number) => {
        delays.push(delayMs);
        log.push(`llm/retry ${attempt}`);
      },
      onRetryStarted: (attempt: number) => {
        log.push(`llm/retry-started ${attempt}`);
      },
    },
    sleep: async () => {},
  };
}

describe("M18 retry policy", () => {
  const half = () => 0.5; // no jitter

  it("backs off 0.5, 1, 2, 4, 8 s and caps at 10 s", () => {
    const policy = new RetryPolicy({}, half);
    expect([1, 2, 3, 4, 5, 6].map((n) => policy.backoff(n))).toEqual([500, 1000, 2000, 4000, 8000, 10000]);
  });

  it("applies ±10 % jitter, never above the cap", () => {
    expect(new RetryPolicy({}, () => 0).backoff(1)).toBe(450);
    expect(new RetryPolicy({}, () => 1).backoff(1)).toBe(550);
    expect(new RetryPolicy({}, () => 1).backoff(5)).toBe(8800);
    expect(new RetryPolicy({}, () => 1).backoff(6)).toBe(10000);
  });

  it("retries the five retryable codes and nothing else in normal mode", () => {
    const policy = new RetryPolicy({}, half);
    for (const code of ["EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"] as const) {
      expect(policy.decide(err(code), 1).retry).toBe(true);
    }
    for (const code of [
      "AUTH",
      "QUOTA",
      "INVALID_REQUEST",
      "STREAM_CLOSED",
      "MALFORMED_RESPONSE",
      "HTTP_418",
    ] as const) {
      expect(policy.decide(err(code), 1)).toEqual({ retry: false, reason: "not-retryable" });
    }
  });

  it("allows max_retries retries per step", () => {
    const policy = new RetryPolicy({ maxRetries: 5 }, half);
    expect(policy.decide(err("SERVER"), 5).retry).toBe(true);
    expect(policy.decide(err("SERVER"), 6)).toEqual({ retry: false, reason: "exhausted" });
  });

  it("uses Retry-After up to max_delay_ms and gives up above it in normal mode", () => {
    const policy = new RetryPolicy({}, half);
    expect(policy.decide(err("RATE_LIMIT", 1000), 1)).toEqual({
      retry: true,
      delayMs: 1000,
      basis: "retry-after",
    });
    expect(policy.decide(err("RATE_LIMIT", 10_000), 1)).toMatchObject({ retry: true, delayMs: 10_000 });
    expect(policy.decide(err("RATE_LIMIT", 30_000), 1)).toEqual({
      retry: false,
      reason: "retry-after-too-long",
    });
  });

  it("always mode: no limit, every code, long Retry-After falls back to backoff; never ABORTED", () => {
    const policy = new RetryPolicy({ mode: "always" }, half);
    expect(policy.decide(err("AUTH"), 50).retry).toBe(true);
    expect(policy.decide(err("RATE_LIMIT", 30_000), 2)).toEqual({
      retry: true,
      delayMs: 1000,
      basis: "backoff",
    });
    expect(policy.decide(err("ABORTED"), 1).retry).toBe(false);
  });

  it("every number is a config key", () => {
    const policy = new RetryPolicy({ initialDelayMs: 10, maxDelayMs: 40, jitterRatio: 0 }, half);
    expect([1, 2, 3, 4].map((n) => policy.backoff(n))).toEqual([10, 20, 40, 40]);
  });
});

describe("acceptance: retries against the fake provider", () => {
  it("429 with Retry-After: 1 waits about a second and retries", async () => {
    const fake = await fakeWith([{ status: 429, headers: { "retry-after": "1" } }, { text: "done" }]);
    const r = recorder();
    const reply = await callWithRetry({
      adapter: adapterFor(fake, "deepseek"),
      request: ask,
      hooks: r.hooks,
    });
    expect(reply.attempts).toBe(2);
    expect(reply.blocks).toEqual([{ type: "text", text: "done" }]);
    expect(r.delays).toEqual([1000]);
    expect(fake.requests).toHaveLength(2);
  });

  it("429 with Retry-After: 30 gives up with RATE_LIMIT", async () => {
    const fake = await fakeWith([{ status: 429, headers: { "retry-after": "30" } }, { text: "never" }]);
    const r = recorder();
    const run = callWithRetry({
      adapter: adapterFor(fake, "deepseek"),
      request: ask,
      hooks: r.hooks,
      sleep: r.sleep,
    });
    await expect(run).rejects.toMatchObject({ code: "RATE_LIMIT", retryAfterMs: 30_000 });
    expect(fake.requests).toHaveLength(1);
    expect(r.log).toEqual(["assistant/attempt 1 RATE_LIMIT"]);
  });

  it("401 is AUTH and not retried", async () => {
    const fake = await fakeWith([{ status: 401 }, { text: "never" }]);
    const r = recorder();
    const run = callWithRetry({
      adapter: adapterFor(fake, "deepseek"),
      request: ask,
      hooks: r.hooks,
      sleep: r.sleep,
    });
    await expect(run).rejects.toMatchObject({ code: "AUTH" });
    expect(fake.requests).toHaveLength(1);
  });

  it("a stall past the idle timeout is TIMEOUT and retried", async () => {
    const fake = await fakeWith([
      { text: "stuck", fault: { kind: "stall", afterFrames: 2 } },
      { text: "fresh" },
    ]);
    const r = recorder();
    const adapter = adapterFor(fake, "deepseek", { idleTimeoutMs: 200 });
    const reply = await callWithRetry({ adapter, request: ask, hooks: r.hooks, sleep: r.sleep });
    expect(reply.attempts).toBe(2);
    expect(r.attempts.map((a) => a.code)).toEqual(["TIMEOUT"]);
    expect(reply.blocks).toEqual([{ type: "text", text: "fresh" }]);
  });
});

describe("M16 failed attempts are logged, never returned", () => {
  it("hands partial output to onAttemptFailed in order with llm/retry events; the reply holds only the success", async () => {
    const fake = await fakeWith([
      { reasoning: "thinking…", text: "half", chunkSize: 4, fault: { kind: "drop", afterFrames: 4 } },
      { reasoning: "only thoughts" },
      { text: "the answer" },
    ]);
    const r = recorder();
    const parts: number[] = [];
    const reply = await callWithRetry({
      adapter: adapterFor(fake, "deepseek"),
      request: () => ask,
      hooks: r.hooks,
      sleep: r.sleep,
      onPart: (_part, attempt) => parts.push(attempt),
    });
    expect(r.log).toEqual([
      "assistant/attempt 1 TRANSPORT",
      "llm/retry 1",
      "llm/retry-started 2",
      "assistant/attempt 2 EMPTY_RESPONSE",
      "llm/retry 2",
      "llm/retry-started 3",
    ]);
    expect(r.attempts[0]?.blocks[0]).toMatchObject({ type: "reasoning" });
    expect(r.attempts[1]?.blocks).toEqual([
      { type: "reasoning", text: "only thoughts", field: "reasoning_content" },
    ]);
    expect(reply.blocks).toEqual([{ type: "text", text: "the answer" }]);
    expect(new Set(parts)).toEqual(new Set([1, 2, 3]));
  });

  it("an abort during the wait ends with ABORTED", async () => {
    const fake = await fakeWith([{ status: 500 }, { text: "never" }]);
    const controller = new AbortController();
    const run = callWithRetry({
      adapter: adapterFor(fake, "deepseek"),
      request: { ...ask, signal: controller.signal },
      hooks: { onRetry: () => controller.abort() },
    });
    await expect(run).rejects.toMatchObject({ code: "ABORTED" });
    expect(fake.requests).toHaveLength(1);
  });
});
