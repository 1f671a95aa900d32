/**
 * M26: provider presets as data. Every per-provider difference the adapters honour is a field here; the
 * adapters consult the preset and never test a provider's name.
 *
 * Invariants:
 * - A route is resolved once from options and the environment; the API key is NOT part of it. It is read
 *   from the environment on every request (M25) by `resolveApiKey`, and nothing in this layer logs it.
 * - Base URL precedence: explicit option (flag or config), `BDSH_BASE_URL`, the preset's own variable,
 *   the preset default. Key precedence: `--api-key-env` variable, the preset's variable, `BDSH_API_KEY`.
 */
import type { ReasoningField } from "../log/messages.js";

export type WireFormat = "openai-chat" | "anthropic-messages";

/** The presets' names: `PRESETS` has exactly these keys (the config's `model.provider` takes them and `replay`). */
export const PROVIDER_NAMES = [
  "deepseek",
  "deepseek-anthropic",
  "together",
  "openai",
  "anthropic",
  "openrouter",
  "openai-compatible",
] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** How the effort level reaches the wire; `reasoningBody` in ./effort.ts is the one reader. */
export type ReasoningSwitch =
  /** DeepSeek OpenAI format (M26): `thinking:{type}`, plus `reasoning_effort` when on. */
  | { kind: "deepseek-thinking" }
  /** Together (M26): `reasoning:{enabled}`; no `reasoning_effort`. */
  | { kind: "together" }
  /** OpenAI: `reasoning_effort`, omitted when off. */
  | { kind: "reasoning-effort" }
  /** OpenRouter's unified field: `reasoning:{effort}`, `"none"` when off. */
  | { kind: "openrouter" }
  /** DeepSeek `/anthropic` (M3, M4): `thinking:{type}` and `output_config:{effort}` when on. */
  | { kind: "anthropic-effort" }
  /** Anthropic: `thinking:{type:"enabled", budget_tokens}` or `{type:"disabled"}`. */
  | { kind: "anthropic-budget" }
  /** Local servers: nothing is sent; the server decides. */
  | { kind: "none" };

/** What every preset has, whatever its wire format. */
type PresetCommon = {
  readonly name: ProviderName;
  readonly baseUrl: string;
  readonly baseUrlEnv: string;
  /** Environment variable holding the key; `BDSH_API_KEY` is always tried after it. */
  readonly keyEnv?: string;
  readonly keyRequired: boolean;
  /** The header the key goes in (`authHeaders`): `Authorization: Bearer`, or `x-api-key`. */
  readonly auth: "bearer" | "x-api-key";
  readonly reasoning: ReasoningSwitch;
  readonly contextWindow: number;
  readonly maxOutputTokens: number;
  /** M7, L12: later system prompts are appended in history, or the first one is rewritten. */
  readonly systemPromptUpdate: "in-history" | "rewrite";
  /**
   * M10: the preset's models take image input. Off where that is not known for every model the preset
   * serves (DeepSeek is text-only; OpenRouter, Together and local servers vary); `model.images` overrides.
   */
  readonly images: boolean;
};

/** A preset has the fields its wire format reads, and only those. */
export type OpenAiChatPreset = PresetCommon & {
  readonly wire: "openai-chat";
  readonly maxTokensField: "max_tokens" | "max_completion_tokens";
  /**
   * The field reasoning is replayed under when its block does not name one (it came from the other wire
   * format). `null`: the endpoint takes no reasoning back, so none is sent.
   */
  readonly reasoningField: ReasoningField | null;
  /** M26: every assistant message carries `reasoning_content`, `""` when it had none (DeepSeek). */
  readonly requiresReasoningContentOnAssistant: boolean;
};

export type AnthropicPreset = PresetCommon & {
  readonly wire: "anthropic-messages";
  /** A thinking block without a valid signature is sent bare, or dropped (M6). */
  readonly unsignedThinking: "send" | "drop";
};

export type Preset = OpenAiChatPreset | AnthropicPreset;

/** The key's header, as the preset says (never chosen by the wire format). */
export function authHeaders(preset: Pick<Preset, "auth">, key: string | undefined): Record<string, string> {
  if (key === undefined) return {};
  return preset.auth === "bearer" ? { authorization: `Bearer ${key}` } : { "x-api-key": key };
}

const OPENAI_CHAT_DEFAULTS = {
  wire: "openai-chat",
  auth: "bearer",
  requiresReasoningContentOnAssistant: false,
  maxTokensField: "max_tokens",
  images: false,
} as const;

const ANTHROPIC_DEFAULTS = {
  wire: "anthropic-messages",
  auth: "x-api-key",
  keyRequired: true,
  images: false,
} as const;

export const PRESETS: Readonly<Record<ProviderName, Preset>> = {
  deepseek: {
    ...OPENAI_CHAT_DEFAULTS,
    name: "deepseek",
    baseUrl: "https://api.deepseek.com",
    baseUrlEnv: "DEEPSEEK_BASE_URL",
    keyEnv: "DEEPSEEK_API_KEY",
    keyRequired: true,
    reasoning: { kind: "deepseek-thinking" },
    reasoningField: "reasoning_content",
    requiresReasoningContentOnAssistant: true,
    contextWindow: 1_048_576,
    maxOutputTokens: 32_768,
    systemPromptUpdate: "in-history",
  },
  "deepseek-anthropic": {
    ...ANTHROPIC_DEFAULTS,
    name: "deepseek-anthropic",
    baseUrl: "https://api.deepseek.com/anthropic",
    // Not DEEPSEEK_BASE_URL: that one points at the OpenAI-format endpoint of the `deepseek` preset.
    baseUrlEnv: "DEEPSEEK_ANTHROPIC_BASE_URL",
    keyEnv: "DEEPSEEK_API_KEY",
    reasoning: { kind: "anthropic-effort" },
    unsignedThinking: "send",
    contextWindow: 1_048_576,
    maxOutputTokens: 32_768,
    systemPromptUpdate: "in-history",
  },
  together: {
    ...OPENAI_CHAT_DEFAULTS,
    name: "together",
    baseUrl: "https://api.together.xyz/v1",
    baseUrlEnv: "TOGETHER_BASE_URL",
    keyEnv: "TOGETHER_API_KEY",
    keyRequired: true,
    reasoning: { kind: "together" },
    reasoningField: "reasoning",
    contextWindow: 262_144,
    maxOutputTokens: 32_768,
    systemPromptUpdate: "rewrite",
  },
  openai: {
    ...OPENAI_CHAT_DEFAULTS,
    name: "openai",
    baseUrl: "https://api.openai.com/v1",
    baseUrlEnv: "OPENAI_BASE_URL",
    keyEnv: "OPENAI_API_KEY",
    keyRequired: true,
    reasoning: { kind: "reasoning-effort" },
    maxTokensField: "max_completion_tokens",
    reasoningField: null,
    images: true,
    contextWindow: 400_000,
    maxOutputTokens: 32_768,
    systemPromptUpdate: "in-history",
  },
  anthropic: {
    ...ANTHROPIC_DEFAULTS,
    name: "anthropic",
    baseUrl: "https://api.anthropic.com",
    baseUrlEnv: "ANTHROPIC_BASE_URL",
    keyEnv: "ANTHROPIC_API_KEY",
    reasoning: { kind: "anthropic-budget" },
    unsignedThinking: "drop",
    images: true,
    contextWindow: 200_000,
    maxOutputTokens: 32_000,
    systemPromptUpdate: "rewrite",
  },
  openrouter: {
    ...OPENAI_CHAT_DEFAULTS,
    name: "openrouter",
    baseUrl: "https://openrouter.ai/api/v1",
    baseUrlEnv: "OPENROUTER_BASE_URL",
    keyEnv: "OPENROUTER_API_KEY",
    keyRequired: true,
    reasoning: { kind: "openrouter" },
    reasoningField: "reasoning",
    contextWindow: 262_144,
    maxOutputTokens: 32_768,
    systemPromptUpdate: "rewrite",
  },
  "openai-compatible": {
    ...OPENAI_CHAT_DEFAULTS,
    name: "openai-compatible",
    baseUrl: "http://127.0.0.1:8000/v1",
    baseUrlEnv: "OPENAI_COMPATIBLE_BASE_URL",
    keyRequired: false,
    reasoning: { kind: "none" },
    reasoningField: "reasoning_content",
    contextWindow: 262_144,
    maxOutputTokens: 32_768,
    systemPromptUpdate: "rewrite",
  },
};

export function isProviderName(value: string): value is ProviderName {
  return (PROVIDER_NAMES as readonly string[]).includes(value);
}

/** M19 default: idle time without any SSE byte before the watchdog fires. */
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

export type RouteOptions = {
  provider: ProviderName;
  baseUrl?: string;
  /** `--api-key-env VAR`: read the key from VAR instead of the preset's variable. */
  apiKeyEnv?: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  /** `stream.idle_timeout_ms`. */
  idleTimeoutMs?: number;
  /** `model.images`: overrides the preset's image capability (M10). */
  images?: boolean;
};

export type Route = {
  readonly preset: Preset;
  readonly baseUrl: string;
  /** Variables tried in order for the key; names only, never values. */
  readonly keyEnvs: readonly string[];
  readonly contextWindow: number;
  readonly maxOutputTokens: number;
  readonly idleTimeoutMs: number;
  /** M10: image parts are sent; otherwise each image is described in text. */
  readonly images: boolean;
};

type Env = Readonly<Record<string, string | undefined>>;

export function resolveRoute(options: RouteOptions, env: Env = process.env): Route {
  const preset = PRESETS[options.provider];
  const baseUrl =
    nonEmpty(options.baseUrl) ??
    nonEmpty(env.BDSH_BASE_URL) ??
    nonEmpty(env[preset.baseUrlEnv]) ??
    preset.baseUrl;
  const keyEnvs = [options.apiKeyEnv ?? preset.keyEnv, "BDSH_API_KEY"].filter(
    (name): name is string => name !== undefined,
  );
  return Object.freeze({
    preset,
    baseUrl: baseUrl.replace(/\/+$/, ""),
    keyEnvs: Object.freeze(keyEnvs),
    contextWindow: options.contextWindow ?? preset.contextWindow,
    maxOutputTokens: options.maxOutputTokens ?? preset.maxOutputTokens,
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    images: imagesFor(options.provider, options.images),
  });
}

/** M10: whether requests to `provider` carry image parts; `override` is `model.images`. */
export function imagesFor(provider: string, override?: boolean): boolean {
  if (override !== undefined) return override;
  return isProviderName(provider) ? PRESETS[provider].images : false;
}

/** M25: read per request, so a rotated key takes effect without a restart. */
export function resolveApiKey(route: Route, env: Env = process.env): string | undefined {
  for (const name of route.keyEnvs) {
    const value = nonEmpty(env[name]);
    if (value !== undefined) return value;
  }
  return undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** The path each wire format posts to, below the base URL. */
export function endpointUrl(route: Route): string {
  return route.preset.wire === "openai-chat"
    ? `${route.baseUrl}/chat/completions`
    : `${route.baseUrl}/v1/messages`;
}

/** A codec's view of its route's preset: the serializer of one wire format is only given routes of it. */
export function presetOf<W extends WireFormat>(route: Route, wire: W): Extract<Preset, { wire: W }> {
  if (route.preset.wire !== wire)
    throw new Error(`preset "${route.preset.name}" speaks ${route.preset.wire}, not ${wire}`);
  return route.preset as Extract<Preset, { wire: W }>;
}
