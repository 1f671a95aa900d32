/**
 * `gemini`: Server-Sent Events (`POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`, key in
 * `x-goog-api-key`, `responseModalities: ["AUDIO"]`): each event's candidate parts carry base64 PCM in
 * `inlineData` (`audio/L16;codec=pcm;rate=24000`) (seed 000 capability matrix).
 *
 * Invariants:
 * - Audio is yielded event by event; a part at another rate is converted to the declared format.
 * - An `error` object in an event is a `TtsError`; the raw SSE text read is bounded (twice the PCM cap,
 *   base64 included), past which reading stops.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { resolveTtsSecret } from "../credentials.js";
import { convertPcm, int16Mono } from "../pcm.js";
import { type ProviderContext, type StreamingTtsProvider, TtsError } from "../provider.js";
import { bodyChunks, postForStream } from "./http-body.js";

export const GEMINI_TTS_DEFAULTS = {
  baseUrl: "https://generativelanguage.googleapis.com",
  model: "gemini-2.5-flash-preview-tts",
  voice: "Kore",
};

type GeminiEvent = {
  candidates?: { content?: { parts?: { inlineData?: { mimeType?: string; data?: string } }[] } }[];
  error?: { message?: string; code?: number };
};

export function geminiProvider(context: ProviderContext): StreamingTtsProvider {
  const settings = context.config.gemini;
  const baseUrl = (settings.base_url ?? GEMINI_TTS_DEFAULTS.baseUrl).replace(/\/+$/, "");
  const format = int16Mono(24_000);
  return {
    name: "gemini",
    kind: "streaming",
    format,
    available: () => resolveTtsSecret("gemini", context.config, context.env) !== undefined,
    async *stream(text, signal) {
      const secret = resolveTtsSecret("gemini", context.config, context.env);
      if (!secret)
        throw new TtsError(
          "NO_CREDENTIALS",
          "gemini: no key (tts.gemini.api_key, GEMINI_API_KEY or GOOGLE_API_KEY)",
          "gemini",
        );
      const model = encodeURIComponent(settings.model ?? GEMINI_TTS_DEFAULTS.model);
      const response = await postForStream(
        context.fetch,
        "gemini",
        `${baseUrl}/v1beta/models/${model}:streamGenerateContent?alt=sse`,
        { "x-goog-api-key": secret.value },
        {
          contents: [{ role: "user", parts: [{ text }] }],
          generationConfig: {
            responseModalities: ["AUDIO"],
            speechConfig: {
              voiceConfig: {
                prebuiltVoiceConfig: { voiceName: settings.voice ?? GEMINI_TTS_DEFAULTS.voice },
              },
            },
          },
        },
        secret.value,
        signal,
      );
      const ready: Uint8Array[] = [];
      let failure: TtsError | undefined;
      const parser = createParser({
        onEvent: (message: EventSourceMessage) => {
          let event: GeminiEvent;
          try {
            event = JSON.parse(message.data) as GeminiEvent;
          } catch {
            failure ??= new TtsError("MALFORMED", "gemini: an event was not JSON", "gemini");
            return;
          }
          if (event.error) {
            failure ??= new TtsError(
              "HTTP",
              `gemini: ${event.error.message ?? "error"}`.replaceAll(secret.value, "[REDACTED]"),
              "gemini",
            );
            return;
          }
          for (const candidate of event.candidates ?? [])
            for (const part of candidate.content?.parts ?? []) {
              const data = part.inlineData?.data;
              if (!data) continue;
              const rate = Number(
                /rate=(\d+)/.exec(part.inlineData?.mimeType ?? "")?.[1] ?? format.sampleRate,
              );
              ready.push(convertPcm(Buffer.from(data, "base64"), int16Mono(rate), format));
            }
        },
      });
      const decoder = new TextDecoder();
      const rawLimit = context.config.max_body_bytes * 2;
      let raw = 0;
      for await (const chunk of bodyChunks(response, "gemini", signal)) {
        raw += chunk.byteLength;
        parser.feed(decoder.decode(chunk, { stream: true }));
        while (ready.length) yield ready.shift()!;
        if (failure) throw failure;
        if (raw > rawLimit) return;
      }
      parser.feed(decoder.decode());
      while (ready.length) yield ready.shift()!;
      if (failure) throw failure;
    },
  };
}
