/** Issue 20 items 3 and 4 (seed 000 streaming-tts.md, "How to pick a provider", credentials). */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { resolveTtsSecret } from "../../src/tts/credentials.js";
import { int16Mono } from "../../src/tts/pcm.js";
import { type ProviderContext, TtsRegistry } from "../../src/tts/provider.js";
import { builtinTtsRegistry, planSpeech } from "../../src/tts/registry.js";

type Tts = ProviderContext["config"];

function context(tts: Partial<Tts>, env: Record<string, string> = {}): ProviderContext {
  return { config: { ...structuredClone(DEFAULT_CONFIG.tts), ...tts }, env, fetch: globalThis.fetch };
}

describe("credentials resolve through one function: config first, then environment", () => {
  it("prefers tts.<provider>.api_key over the environment", () => {
    const tts = { ...DEFAULT_CONFIG.tts, openai: { api_key: "sk-from-config-123" } };
    expect(resolveTtsSecret("openai", tts, { OPENAI_API_KEY: "sk-from-env-456" })).toEqual({
      value: "sk-from-config-123",
      source: "tts.openai.api_key",
    });
  });

  it("falls back to the provider's variables in order; blanks are absent", () => {
    expect(
      resolveTtsSecret("gemini", DEFAULT_CONFIG.tts, { GEMINI_API_KEY: " ", GOOGLE_API_KEY: "g-key-789" }),
    ).toEqual({
      value: "g-key-789",
      source: "GOOGLE_API_KEY",
    });
    expect(resolveTtsSecret("xai", DEFAULT_CONFIG.tts, {})).toBeUndefined();
  });

  it("available() is a pure probe of the resolver: no key, not available; nothing is fetched", () => {
    let fetched = 0;
    const ctx: ProviderContext = {
      ...context({}),
      fetch: (() => {
        fetched++;
        throw new Error("no network in a probe");
      }) as typeof fetch,
    };
    const registry = builtinTtsRegistry();
    for (const name of ["openai", "elevenlabs", "gemini", "xai"])
      expect(registry.create(name, ctx).available()).toBe(false);
    expect(
      registry.create("elevenlabs", { ...ctx, env: { ELEVENLABS_API_KEY: "el-key-123" } }).available(),
    ).toBe(true);
    expect(fetched).toBe(0);
  });
});

describe("choosing a provider (Hermes streaming TTS rules)", () => {
  const registry = builtinTtsRegistry();

  it("by default streams with tts.provider when it has a chunked API", () => {
    const plan = planSpeech(
      registry,
      context({ provider: "gemini" }, { GEMINI_API_KEY: "g-key-123", ELEVENLABS_API_KEY: "el-key-1234" }),
    );
    expect(plan.streamer?.name).toBe("gemini");
    expect(plan.sync?.name).toBe("espeak");
  });

  it("never swaps the user's voice by default: a sync tts.provider streams nothing", () => {
    const plan = planSpeech(registry, context({ provider: "espeak" }, { ELEVENLABS_API_KEY: "el-key-1234" }));
    expect(plan.streamer).toBeUndefined();
    expect(plan.sync?.name).toBe("espeak");
  });

  it("tts.streaming.provider: <name> pins that streamer", () => {
    const plan = planSpeech(
      registry,
      context({ provider: "espeak", streaming: { provider: "xai" } }, { XAI_API_KEY: "x-key-1234" }),
    );
    expect(plan.streamer?.name).toBe("xai");
  });

  it("auto walks elevenlabs → gemini → openai → xai and takes the first whose credentials resolve", () => {
    const auto = (env: Record<string, string>) =>
      planSpeech(registry, context({ streaming: { provider: "auto" } }, env)).streamer?.name;
    expect(auto({ XAI_API_KEY: "x-key-1234", OPENAI_API_KEY: "o-key-1234" })).toBe("openai");
    expect(
      auto({ XAI_API_KEY: "x-key-1234", GOOGLE_API_KEY: "g-key-1234", OPENAI_API_KEY: "o-key-1234" }),
    ).toBe("gemini");
    expect(auto({ ELEVENLABS_API_KEY: "e-key-1234", GOOGLE_API_KEY: "g-key-1234" })).toBe("elevenlabs");
    expect(auto({})).toBeUndefined();
  });

  it("a streamer without credentials leaves per-sentence sync speech, and says so", () => {
    const plan = planSpeech(registry, context({ provider: "openai" }));
    expect(plan.streamer).toBeUndefined();
    expect(plan.sync?.name).toBe("espeak");
    expect(plan.notes.join(" ")).toContain("openai has no credentials");
  });

  it("off never streams; an unknown name is an error naming the known ones", () => {
    expect(
      planSpeech(
        registry,
        context({ provider: "openai", streaming: { provider: "off" } }, { OPENAI_API_KEY: "o-key-1234" }),
      ).streamer,
    ).toBeUndefined();
    expect(() => planSpeech(registry, context({ provider: "nope" }))).toThrow(
      /no TTS provider named nope \(known: .*espeak/,
    );
  });

  it("providers register by name; a second registration of a name is refused", () => {
    const own = new TtsRegistry().register("tone", () => ({
      name: "tone",
      kind: "sync",
      format: int16Mono(8000),
      available: () => true,
      synthesize: async () => ({ format: int16Mono(8000), pcm: new Uint8Array(2) }),
    }));
    expect(own.names()).toEqual(["tone"]);
    expect(() => own.register("tone", () => own.create("tone", context({})))).toThrow(/already registered/);
  });
});
