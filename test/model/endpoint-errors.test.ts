/**
 * Issue 15 item 6: a refused connection or an unknown model says where the request went (preset, base
 * URL with credentials redacted, model id sent) and what to check; the key never appears.
 */
import { afterEach, describe, expect, it } from "vitest";
import { displayBaseUrl, isModelNotFound } from "../../src/model/errors.js";
import { createAdapter, resolveRoute } from "../../src/model/index.js";
import { closedPort } from "../support/closed-port.js";
import { closeFakes, failure, fakeWith, request, routeTo, TEST_ENV, TEST_KEY } from "./support.js";

afterEach(closeFakes);

const ask = (model: string) => request([{ role: "user", text: "go" }], { model });

describe("transport errors name the endpoint", () => {
  it("a refused connection names the preset, base URL and model, and says what to check", async () => {
    const port = await closedPort();
    const route = resolveRoute({ provider: "deepseek", baseUrl: `http://127.0.0.1:${port}` }, {});
    const error = await failure(createAdapter(route, { env: TEST_ENV }).stream(ask("deepseek-chat")));
    expect(error.code).toBe("TRANSPORT");
    expect(error.message).toMatch(/^connection failed: .*ECONNREFUSED/);
    expect(error.message).toContain(
      `(provider deepseek, base URL http://127.0.0.1:${port}, model deepseek-chat): check the base URL (--base-url, BDSH_BASE_URL, DEEPSEEK_BASE_URL or model.base_url) and that the server is reachable`,
    );
    expect(error.message).not.toContain(TEST_KEY);
  });

  it("credentials in the base URL are redacted, and the key never appears", async () => {
    const port = await closedPort();
    const baseUrl = `http://proxy-user:proxy-pass-42@127.0.0.1:${port}/v1?api-key=${TEST_KEY}&region=eu`;
    const route = resolveRoute({ provider: "openai-compatible", baseUrl }, {});
    const error = await failure(createAdapter(route, { env: TEST_ENV }).stream(ask("local-model")));
    expect(error.code).toBe("TRANSPORT");
    expect(error.message).toContain(
      `base URL http://***:***@127.0.0.1:${port}/v1?api-key=***&region=eu, model local-model)`,
    );
    for (const secret of [TEST_KEY, "proxy-user", "proxy-pass-42"])
      expect(error.message).not.toContain(secret);
  });
});

describe("not-found errors name the endpoint and keep the M17 codes", () => {
  it("an OpenAI 404 model_not_found", async () => {
    const fake = await fakeWith([
      {
        status: 404,
        body: {
          error: {
            message: "The model `gpt-9` does not exist or you do not have access to it.",
            type: "invalid_request_error",
            param: null,
            code: "model_not_found",
          },
        },
      },
    ]);
    const route = routeTo(fake, "openai");
    const error = await failure(createAdapter(route, { env: TEST_ENV }).stream(ask("gpt-9")));
    expect(fake.requests[0]?.body?.model).toBe("gpt-9");
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.status).toBe(404);
    expect(error.message).toBe(
      `404: The model \`gpt-9\` does not exist or you do not have access to it. (provider openai, base URL ${fake.url}/v1, model gpt-9): check the model id (--model, BDSH_MODEL or model.id) and that this base URL serves it`,
    );
  });

  it('a DeepSeek 400 "Model Not Exist"', async () => {
    const fake = await fakeWith([
      {
        status: 400,
        body: {
          error: {
            message: "Model Not Exist",
            type: "invalid_request_error",
            param: null,
            code: "invalid_request_error",
          },
        },
      },
    ]);
    const error = await failure(
      createAdapter(routeTo(fake, "deepseek"), { env: TEST_ENV }).stream(ask("deepseek-chatt")),
    );
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.message).toBe(
      `400: Model Not Exist (provider deepseek, base URL ${fake.url}, model deepseek-chatt): check the model id (--model, BDSH_MODEL or model.id) and that this base URL serves it`,
    );
  });

  it("an Anthropic 404 not_found_error", async () => {
    const fake = await fakeWith([
      {
        status: 404,
        body: { type: "error", error: { type: "not_found_error", message: "model: claude-9" } },
      },
    ]);
    const error = await failure(
      createAdapter(routeTo(fake, "anthropic"), { env: TEST_ENV }).stream(ask("claude-9")),
    );
    expect(error.code).toBe("HTTP_404");
    expect(error.message).toContain(
      `(provider anthropic, base URL ${fake.url}, model claude-9): check the model id`,
    );
  });

  it("another 400 is left as it was", async () => {
    const fake = await fakeWith([
      {
        status: 400,
        body: { error: { message: "messages: field required", type: "invalid_request_error" } },
      },
    ]);
    const error = await failure(
      createAdapter(routeTo(fake, "deepseek"), { env: TEST_ENV }).stream(ask("deepseek-chat")),
    );
    expect(error.message).toBe("400: messages: field required");
  });
});

describe("isModelNotFound, one row per provider message", () => {
  it.each([
    [400, "Model Not Exist", true],
    [400, "foo/bar is not a valid model ID", true],
    [400, 'model "foo" not found, try pulling it first', true],
    [400, "Unable to access model foo. Please visit https://api.together.ai/models", true],
    [404, "no such endpoint: /v2/chat/completions", true],
    [400, "messages: field required", false],
    [400, "max_tokens must be at most 8192 for this model", false],
    [401, "model not found", false],
  ])("%i %s → %s", (status, message, expected) => {
    expect(isModelNotFound(status, message)).toBe(expected);
  });
});

describe("displayBaseUrl", () => {
  it("keeps a URL without credentials exactly as written", () => {
    expect(displayBaseUrl("https://api.deepseek.com")).toBe("https://api.deepseek.com");
    expect(displayBaseUrl("https://openrouter.ai/api/v1")).toBe("https://openrouter.ai/api/v1");
  });

  it("redacts user, password and secret-looking parameters, and hides an unparsable URL", () => {
    expect(displayBaseUrl("https://tok@proxy.example/v1")).toBe("https://***@proxy.example/v1");
    expect(displayBaseUrl("https://proxy.example/v1?token=abc&x=1")).toBe(
      "https://proxy.example/v1?token=***&x=1",
    );
    expect(displayBaseUrl(`not a url ${TEST_KEY}`)).toBe("(unparsable base URL, not shown)");
  });
});
