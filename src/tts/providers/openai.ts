/**
 * `openai`: chunked HTTP (`POST {base}/audio/speech`, `response_format: "pcm"`): the body is raw int16
 * mono PCM at 24 kHz, streamed as it is synthesized (seed 000 capability matrix).
 */
import { resolveTtsSecret } from "../credentials.js";
import { int16Mono } from "../pcm.js";
import { type ProviderContext, type StreamingTtsProvider, TtsError } from "../provider.js";
import { bodyChunks, postForStream } from "./http-body.js";

export const OPENAI_TTS_DEFAULTS = {
  baseUrl: "https://api.openai.com/v1",
  model: "gpt-4o-mini-tts",
  voice: "alloy",
};

export function openaiProvider(context: ProviderContext): StreamingTtsProvider {
  const settings = context.config.openai;
  const baseUrl = (settings.base_url ?? OPENAI_TTS_DEFAULTS.baseUrl).replace(/\/+$/, "");
  return {
    name: "openai",
    kind: "streaming",
    format: int16Mono(24_000),
    available: () => resolveTtsSecret("openai", context.config, context.env) !== undefined,
    async *stream(text, signal) {
      const secret = resolveTtsSecret("openai", context.config, context.env);
      if (!secret)
        throw new TtsError(
          "NO_CREDENTIALS",
          "openai: no key (tts.openai.api_key or OPENAI_API_KEY)",
          "openai",
        );
      const response = await postForStream(
        context.fetch,
        "openai",
        `${baseUrl}/audio/speech`,
        { authorization: `Bearer ${secret.value}` },
        {
          model: settings.model ?? OPENAI_TTS_DEFAULTS.model,
          voice: settings.voice ?? OPENAI_TTS_DEFAULTS.voice,
          input: text,
          response_format: "pcm",
        },
        secret.value,
        signal,
      );
      yield* bodyChunks(response, "openai", signal);
    },
  };
}
