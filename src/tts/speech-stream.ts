/**
 * `SpeechStream`: one reply's text deltas to audio in a sink, sentence by sentence (seed 000 streaming-tts.md,
 * "Architecture": producer → sentence chunker → provider → sink).
 *
 * Invariants:
 * - Sentences are spoken in order, one at a time; the chunker keeps taking deltas meanwhile, so the first
 *   sentence is heard while the model still writes the rest.
 * - Every sentence passes `spokenText` (one cleaner, all paths); one that cleans to nothing is skipped.
 * - A sentence's streamed PCM is capped at `maxBodyBytes`; past it the request is cancelled, the audio so far
 *   kept, and a `capped` report made.
 * - A streamer failure before any of a sentence's audio falls back to the sync provider for that sentence
 *   and the rest of the reply (`fallback` report); after some audio, the sentence's rest is lost (`failed`).
 * - `interrupt()` (Ctrl-C, a steer) aborts the request in flight, drops queued sentences and interrupts
 *   the sink at once, and the stream goes on with the next reply; `stop()` does that and ends the stream.
 *   `flush()` ends one reply of several; `end()` ends the last and resolves when its audio is in the sink.
 * - Reports never contain a credential (the providers' errors are redacted at the source).
 */
import { convertPcm, type PcmFormat, sameFormat } from "./pcm.js";
import type { TtsErrorCode } from "./provider.js";
import { TtsError } from "./provider.js";
import type { SpeechPlan } from "./registry.js";
import { SentenceChunker } from "./sentence-chunker.js";
import type { AudioSink } from "./sinks.js";
import { spokenText } from "./spoken-text.js";

export type TtsReport =
  | { kind: "capped"; provider: string; bytes: number }
  | { kind: "fallback"; provider: string; code: TtsErrorCode; message: string }
  | { kind: "failed"; provider: string; code: TtsErrorCode; message: string }
  | { kind: "silent"; message: string };

export type SpeechOutcome = {
  sentences: number;
  /** PCM bytes written to the sink (in its format). */
  bytes: number;
  /** Whether any audio reached the sink. */
  heard: boolean;
  /** Whether the streamer failed during this reply. */
  streamFailed: boolean;
  stopped: boolean;
};

export type SpeechStreamOptions = {
  plan: SpeechPlan;
  sink: AudioSink;
  maxChunkChars: number;
  maxBodyBytes: number;
  onReport?: (report: TtsReport) => void;
  /** Called once, when the first PCM byte is written (for time stamps and the benchmark). */
  onFirstAudio?: () => void;
};

export class SpeechStream {
  private readonly chunker: SentenceChunker;
  private readonly queue: string[] = [];
  private controller = new AbortController();
  private wake: (() => void) | undefined;
  private ended = false;
  private streamFailed = false;
  private readonly outcome: SpeechOutcome = {
    sentences: 0,
    bytes: 0,
    heard: false,
    streamFailed: false,
    stopped: false,
  };
  private readonly done: Promise<SpeechOutcome>;
  private carry: Buffer = Buffer.alloc(0);

  constructor(private readonly options: SpeechStreamOptions) {
    this.chunker = new SentenceChunker({ maxChars: options.maxChunkChars });
    this.done = this.run();
  }

  push(delta: string): void {
    if (this.ended) return;
    this.enqueue(this.chunker.push(delta));
  }

  /** The reply is complete: speak what is left and resolve when the last audio is in the sink. */
  end(): Promise<SpeechOutcome> {
    if (!this.ended) this.enqueue(this.chunker.end());
    this.ended = true;
    this.wake?.();
    return this.done;
  }

  /** One reply is complete but more will follow on this stream (a chat, goal rounds): speak the rest. */
  flush(): void {
    if (!this.ended) this.enqueue(this.chunker.end());
    this.streamFailed = false; // the next reply tries the streamer again
  }

  /** Stops what is being said now (a steer, Ctrl-C) and drops what is queued; the stream stays usable. */
  interrupt(): void {
    this.outcome.stopped = true;
    this.controller.abort();
    this.controller = new AbortController();
    this.queue.length = 0;
    this.chunker.reset();
    this.options.sink.interrupt();
  }

  stop(): Promise<SpeechOutcome> {
    if (!this.ended) this.interrupt();
    this.controller.abort();
    this.ended = true;
    this.wake?.();
    return this.done;
  }

  private enqueue(pieces: string[]): void {
    for (const piece of pieces) {
      const text = spokenText(piece);
      if (/[\p{L}\p{N}]/u.test(text)) this.queue.push(text); // punctuation alone is not said
    }
    if (this.queue.length) this.wake?.();
  }

  private async run(): Promise<SpeechOutcome> {
    for (;;) {
      const signal = this.controller.signal;
      if (signal.aborted && this.ended) break;
      const sentence = this.queue.shift();
      if (sentence === undefined) {
        if (this.ended) break;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      this.outcome.sentences++;
      await this.speak(sentence, signal).catch((error: unknown) => {
        if (!signal.aborted) this.report(failure("failed", "sink", error));
      });
    }
    this.outcome.streamFailed = this.streamFailed;
    return this.outcome;
  }

  private async speak(sentence: string, signal: AbortSignal): Promise<void> {
    this.carry = Buffer.alloc(0);
    const { streamer, sync } = this.options.plan;
    if (streamer && !this.streamFailed) {
      let written = 0;
      try {
        for await (const chunk of streamer.stream(sentence, signal)) {
          if (signal.aborted) return;
          const room = this.options.maxBodyBytes - written;
          const piece = chunk.byteLength > room ? chunk.subarray(0, room) : chunk;
          written += piece.byteLength;
          await this.write(piece, streamer.format);
          if (written >= this.options.maxBodyBytes) {
            this.report({ kind: "capped", provider: streamer.name, bytes: written });
            break; // leaving the loop cancels the request
          }
        }
        return;
      } catch (error) {
        if (signal.aborted) return;
        this.streamFailed = true;
        if (written > 0) {
          this.report(failure("failed", streamer.name, error));
          return;
        }
        this.report(failure("fallback", streamer.name, error));
      }
    }
    if (!sync) {
      this.report({ kind: "silent", message: "no provider can speak this sentence" });
      return;
    }
    try {
      const audio = await sync.synthesize(sentence, signal);
      if (signal.aborted) return;
      const pcm =
        audio.pcm.byteLength > this.options.maxBodyBytes
          ? audio.pcm.subarray(0, this.options.maxBodyBytes)
          : audio.pcm;
      if (pcm !== audio.pcm) this.report({ kind: "capped", provider: sync.name, bytes: pcm.byteLength });
      await this.write(pcm, audio.format);
    } catch (error) {
      if (!signal.aborted) this.report(failure("failed", sync.name, error));
    }
  }

  private async write(chunk: Uint8Array, format: PcmFormat): Promise<void> {
    let input = chunk;
    if (!sameFormat(format, this.options.sink.format)) {
      // A chunk may end inside a frame; its tail waits for the next chunk of the same sentence.
      const joined = this.carry.byteLength ? Buffer.concat([this.carry, chunk]) : Buffer.from(chunk);
      const whole = joined.byteLength - (joined.byteLength % (format.channels * format.sampleWidth));
      this.carry = joined.subarray(whole);
      input = joined.subarray(0, whole);
    }
    const pcm = convertPcm(input, format, this.options.sink.format);
    if (pcm.byteLength === 0) return;
    if (!this.outcome.heard) {
      this.outcome.heard = true;
      this.options.onFirstAudio?.();
    }
    this.outcome.bytes += pcm.byteLength;
    await this.options.sink.write(pcm);
  }

  private report(report: TtsReport): void {
    this.options.onReport?.(report);
  }
}

function failure(kind: "fallback" | "failed", provider: string, error: unknown): TtsReport {
  if (error instanceof TtsError) return { kind, provider, code: error.code, message: error.message };
  return { kind, provider, code: "PROCESS", message: error instanceof Error ? error.message : String(error) };
}
