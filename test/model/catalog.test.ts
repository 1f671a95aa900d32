import { afterEach, describe, expect, it } from "vitest";
import {
  authHeaders,
  createAdapter,
  endpointUrl,
  PRESETS,
  PROVIDER_NAMES,
  resolveApiKey,
  resolveRoute,
} from "../../src/model/index.js";
import { closeFakes, drain, failure, fakeWith, request } from "./support.js";

afterEach(closeFakes);

describe("M26 catalog of presets", () => {
  it("holds the seven presets of INTERFACE.md with their key variables", () => {
    expect([...PROVIDER_NAMES].sort()).toEqual(
      [
        "anthropic",
        "deepseek",
        "deepseek-anthropic",
        "openai",
        "openai-compatible",
        "openrouter",
        "together",
      ].sort(),
    );
    expect(PRESETS.deepseek.keyEnv).toBe("DEEPSEEK_API_KEY");
    expect(PRESETS.together.keyEnv).toBe("TOGETHER_API_KEY");
    expect(PRESETS.openai.keyEnv).toBe("OPENAI_API_KEY");
    expect(PRESETS.anthropic.keyEnv).toBe("ANTHROPIC_API_KEY");
    expect(PRESETS.openrouter.keyEnv).toBe("OPENROUTER_API_KEY");
    expect(PRESETS["openai-compatible"].keyRequired).toBe(false);
  });

  it("resolves the endpoint per wire format", () => {
    expect(endpointUrl(resolveRoute({ provider: "deepseek" }, {}))).toBe(
      "https://api.deepseek.com/chat/completions",
    );
    expect(endpointUrl(resolveRoute({ provider: "deepseek-anthropic" }, {}))).toBe(
      "https://api.deepseek.com/anthropic/v1/messages",
    );
    expect(endpointUrl(resolveRoute({ provider: "together" }, {}))).toBe(
      "https://api.together.xyz/v1/chat/completions",
    );
  });

  it("base URL precedence: option, BDSH_BASE_URL, preset variable, default", () => {
    const env = { BDSH_BASE_URL: "http://b/", DEEPSEEK_BASE_URL: "http://d" };
    expect(resolveRoute({ provider: "deepseek", baseUrl: "http://o" }, env).baseUrl).toBe("http://o");
    expect(resolveRoute({ provider: "deepseek" }, env).baseUrl).toBe("http://b");
    expect(resolveRoute({ provider: "deepseek" }, { DEEPSEEK_BASE_URL: "http://d" }).baseUrl).toBe(
      "http://d",
    );
    expect(resolveRoute({ provider: "deepseek" }, {}).baseUrl).toBe("https://api.deepseek.com");
  });

  it("key precedence: --api-key-env variable, preset variable, BDSH_API_KEY", () => {
    const route = resolveRoute({ provider: "openai" }, {});
    expect(resolveApiKey(route, { OPENAI_API_KEY: "a", BDSH_API_KEY: "b" })).toBe("a");
    expect(resolveApiKey(route, { BDSH_API_KEY: "b" })).toBe("b");
    const custom = resolveRoute({ provider: "openai", apiKeyEnv: "MY_KEY" }, {});
    expect(resolveApiKey(custom, { MY_KEY: "m", OPENAI_API_KEY: "a" })).toBe("m");
  });

  it("config overrides the window, output cap and idle timeout", () => {
    const route = resolveRoute(
      { provider: "deepseek", contextWindow: 1000, maxOutputTokens: 10, idleTimeoutMs: 5 },
      {},
    );
    expect([route.contextWindow, route.maxOutputTokens, route.idleTimeoutMs]).toEqual([1000, 10, 5]);
    expect(resolveRoute({ provider: "deepseek" }, {}).idleTimeoutMs).toBe(300_000);
  });
});

describe("M25 keys are read per request and never leak", () => {
  it("a rotated key is used by the next request", async () => {
    const fake = await fakeWith([{ text: "a" }, { text: "b" }]);
    const env: Record<string, string> = { DEEPSEEK_API_KEY: "key-one" };
    const adapter = createAdapter(resolveRoute({ provider: "deepseek", baseUrl: fake.url }, {}), { env });
    await drain(adapter.stream(request([{ role: "user", text: "x" }])));
    env.DEEPSEEK_API_KEY = "key-two";
    await drain(adapter.stream(request([{ role: "user", text: "x" }])));
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual(["Bearer key-one", "Bearer key-two"]);
  });

  it("caller headers cannot override credentials, and errors do not echo the key", async () => {
    const fake = await fakeWith([{ status: 401, body: { error: { message: "bad key" } } }]);
    const adapter = createAdapter(resolveRoute({ provider: "deepseek", baseUrl: fake.url }, {}), {
      env: { DEEPSEEK_API_KEY: "sk-very-secret" },
    });
    const error = await failure(
      adapter.stream(
        request([{ role: "user", text: "x" }], {
          headers: { Authorization: "Bearer other", "x-trace": "1" },
        }),
      ),
    );
    expect(fake.requests[0]?.headers.authorization).toBe("Bearer sk-very-secret");
    expect(fake.requests[0]?.headers["x-trace"]).toBe("1");
    expect(error.code).toBe("AUTH");
    expect(`${error.message} ${JSON.stringify(error)}`).not.toContain("sk-very-secret");
  });

  it("openai-compatible works without any key", async () => {
    const fake = await fakeWith([{ text: "local" }]);
    const adapter = createAdapter(resolveRoute({ provider: "openai-compatible", baseUrl: fake.url }, {}), {
      env: {},
    });
    await drain(adapter.stream(request([{ role: "user", text: "x" }])));
    expect(fake.requests[0]?.headers.authorization).toBeUndefined();
  });
});

describe("presets by wire format (issue 16 item 9)", () => {
  it("the key's header is the preset's choice, and each preset carries only its wire format's fields", () => {
    for (const preset of Object.values(PRESETS)) {
      const headers = authHeaders(preset, "k");
      if (preset.auth === "bearer") expect(headers).toEqual({ authorization: "Bearer k" });
      else expect(headers).toEqual({ "x-api-key": "k" });
      expect(authHeaders(preset, undefined)).toEqual({});
      if (preset.wire === "openai-chat") expect(preset).not.toHaveProperty("unsignedThinking");
      else {
        expect(preset).not.toHaveProperty("maxTokensField");
        expect(preset).not.toHaveProperty("reasoningField");
        expect(preset).not.toHaveProperty("requiresReasoningContentOnAssistant");
      }
    }
  });
});
