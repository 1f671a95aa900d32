/**
 * `xai`: WebSocket (`wss://api.x.ai/v1/tts?voice=…&codec=pcm&sample_rate=24000`, `Authorization: Bearer`)
 * (seed 000 capability matrix). The client sends the sentence as `{"type":"text.delta","delta":…}` and
 * then `{"type":"text.done"}`; the server answers `{"type":"audio.delta","delta":<base64 PCM>}` frames, then
 * `{"type":"audio.done"}`, or `{"type":"error","message":…}`.
 *
 * Invariants:
 * - One connection per sentence, closed when the sentence's audio is done, on an error, or on abort.
 * - Chunks are yielded as frames arrive; the frames read are bounded (twice the PCM cap, base64 included).
 * - Messages never include the key: the upgrade error names the status only.
 */
import WebSocket from "ws";
import { resolveTtsSecret } from "../credentials.js";
import { int16Mono } from "../pcm.js";
import { type ProviderContext, type StreamingTtsProvider, TtsError } from "../provider.js";

export const XAI_TTS_DEFAULTS = { baseUrl: "wss://api.x.ai/v1/tts", voice: "eve", language: "en" };

type Pending = { resolve: () => void };

export function xaiProvider(context: ProviderContext): StreamingTtsProvider {
  const settings = context.config.xai;
  const format = int16Mono(24_000);
  return {
    name: "xai",
    kind: "streaming",
    format,
    available: () => resolveTtsSecret("xai", context.config, context.env) !== undefined,
    async *stream(text, signal) {
      const secret = resolveTtsSecret("xai", context.config, context.env);
      if (!secret)
        throw new TtsError("NO_CREDENTIALS", "xai: no key (tts.xai.api_key or XAI_API_KEY)", "xai");
      const url = new URL(settings.base_url ?? XAI_TTS_DEFAULTS.baseUrl);
      url.searchParams.set("voice", settings.voice ?? XAI_TTS_DEFAULTS.voice);
      url.searchParams.set("language", XAI_TTS_DEFAULTS.language);
      url.searchParams.set("codec", "pcm");
      url.searchParams.set("sample_rate", String(format.sampleRate));
      if (settings.model) url.searchParams.set("model", settings.model);
      const shown = `${url.origin}${url.pathname}`;
      const socket = new WebSocket(url, {
        headers: { authorization: `Bearer ${secret.value}` },
        followRedirects: false,
      });
      const queue: Uint8Array[] = [];
      let done = false;
      let failure: TtsError | undefined;
      let waiting: Pending | undefined;
      let raw = 0;
      const wake = () => {
        waiting?.resolve();
        waiting = undefined;
      };
      const finish = (error?: TtsError) => {
        if (done) return;
        done = true;
        failure = error;
        wake();
      };
      socket.on("open", () => {
        socket.send(JSON.stringify({ type: "text.delta", delta: text }));
        socket.send(JSON.stringify({ type: "text.done" }));
      });
      socket.on("unexpected-response", (_request, response) => {
        finish(new TtsError("HTTP", `xai: ${shown} refused the upgrade: ${response.statusCode}`, "xai"));
        socket.terminate();
      });
      socket.on("message", (data, isBinary) => {
        raw += Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer).byteLength;
        if (raw > context.config.max_body_bytes * 2) {
          finish();
          socket.terminate();
          return;
        }
        if (isBinary) {
          finish(new TtsError("MALFORMED", "xai: a binary frame where JSON was expected", "xai"));
          return;
        }
        let message: { type?: string; delta?: string; message?: string };
        try {
          message = JSON.parse(data.toString()) as typeof message;
        } catch {
          finish(new TtsError("MALFORMED", "xai: a frame was not JSON", "xai"));
          return;
        }
        if (message.type === "audio.delta" && typeof message.delta === "string") {
          queue.push(Buffer.from(message.delta, "base64"));
          wake();
        } else if (message.type === "audio.done") finish();
        else if (message.type === "error")
          finish(
            new TtsError(
              "HTTP",
              `xai: ${String(message.message ?? "error")}`.replaceAll(secret.value, "[REDACTED]"),
              "xai",
            ),
          );
      });
      socket.on("error", (error) =>
        finish(
          new TtsError(
            "NETWORK",
            `xai: ${shown}: ${error.message}`.replaceAll(secret.value, "[REDACTED]"),
            "xai",
          ),
        ),
      );
      socket.on("close", () =>
        finish(
          done ? undefined : new TtsError("NETWORK", `xai: ${shown} closed before the audio was done`, "xai"),
        ),
      );
      const onAbort = () => finish(new TtsError("ABORTED", "xai: stopped", "xai"));
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        for (;;) {
          while (queue.length) yield queue.shift()!;
          if (done) break;
          await new Promise<void>((resolve) => {
            waiting = { resolve };
          });
        }
        while (queue.length && !failure) yield queue.shift()!;
        if (failure) throw failure;
      } finally {
        signal.removeEventListener("abort", onAbort);
        if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING)
          socket.terminate();
      }
    },
  };
}
