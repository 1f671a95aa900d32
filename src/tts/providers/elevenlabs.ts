/**
 * `elevenlabs`: chunked HTTP (`POST {base}/v1/text-to-speech/{voice}/stream?output_format=pcm_24000`,
 * key in `xi-api-key`): the body is raw int16 mono PCM at 24 kHz (seed 000 capability matrix).
 */
import { resolveTtsSecret } from "../credentials.js";
import { int16Mono } from "../pcm.js";
import { type ProviderContext, type StreamingTtsProvider, TtsError } from "../provider.js";
import { bodyChunks, postForStream } from "./http-body.js";

export const ELEVENLABS_TTS_DEFAULTS = {
  baseUrl: "https://api.elevenlabs.io",
  model: "eleven_flash_v2_5",
  voice: "21m00Tcm4TlvDq8ikWAM",
};

export function elevenlabsProvider(context: ProviderContext): StreamingTtsProvider {
  const settings = context.config.elevenlabs;
  const baseUrl = (settings.base_url ?? ELEVENLABS_TTS_DEFAULTS.baseUrl).replace(/\/+$/, "");
  return {
    name: "elevenlabs",
    kind: "streaming",
    format: int16Mono(24_000),
    available: () => resolveTtsSecret("elevenlabs", context.config, context.env) !== undefined,
    async *stream(text, signal) {
      const secret = resolveTtsSecret("elevenlabs", context.config, context.env);
      if (!secret)
        throw new TtsError(
          "NO_CREDENTIALS",
          "elevenlabs: no key (tts.elevenlabs.api_key or ELEVENLABS_API_KEY)",
          "elevenlabs",
        );
      const voice = encodeURIComponent(settings.voice ?? ELEVENLABS_TTS_DEFAULTS.voice);
      const response = await postForStream(
        context.fetch,
        "elevenlabs",
        `${baseUrl}/v1/text-to-speech/${voice}/stream?output_format=pcm_24000`,
        { "xi-api-key": secret.value, accept: "audio/pcm" },
        { text, model_id: settings.model ?? ELEVENLABS_TTS_DEFAULTS.model },
        secret.value,
        signal,
      );
      yield* bodyChunks(response, "elevenlabs", signal);
    },
  };
}
