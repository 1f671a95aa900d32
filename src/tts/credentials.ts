/**
 * `resolveTtsSecret`: the one place a TTS provider's credential is looked up (seed 000 streaming-tts.md:
 * "All credential lookups go through one resolver (config > env) — never bare env reads").
 *
 * Invariants:
 * - Order: `tts.<provider>.api_key` in the configuration, then the provider's environment variables in
 *   the order listed here, given as an explicit `env` (never `process.env` read here).
 * - Blank values count as absent. The value is returned to the provider only; `source` names where it
 *   came from without the value, for messages.
 */
import type { Config } from "../config/schema.js";

export const TTS_KEY_ENVS = {
  openai: ["OPENAI_API_KEY"],
  elevenlabs: ["ELEVENLABS_API_KEY"],
  gemini: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
  xai: ["XAI_API_KEY"],
} as const;

export type RemoteTtsProvider = keyof typeof TTS_KEY_ENVS;

export type TtsSecret = { value: string; source: string };

export function resolveTtsSecret(
  provider: RemoteTtsProvider,
  config: Config["tts"],
  env: Readonly<Record<string, string | undefined>>,
): TtsSecret | undefined {
  const configured = config[provider].api_key?.trim();
  if (configured) return { value: configured, source: `tts.${provider}.api_key` };
  for (const name of TTS_KEY_ENVS[provider]) {
    const value = env[name]?.trim();
    if (value) return { value, source: name };
  }
  return undefined;
}

/** Every TTS credential that resolves, for the redactor of a process that speaks. */
export function ttsSecretValues(
  config: Config["tts"],
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  return (Object.keys(TTS_KEY_ENVS) as RemoteTtsProvider[])
    .map((provider) => resolveTtsSecret(provider, config, env)?.value)
    .filter((value): value is string => value !== undefined);
}
