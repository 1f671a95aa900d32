/** Scripted providers and sinks for the speech tests: no network, no binaries. */
import { int16Mono, type PcmFormat } from "../../src/tts/pcm.js";
import type { StreamingTtsProvider, SyncTtsProvider } from "../../src/tts/provider.js";
import { TtsError } from "../../src/tts/provider.js";
import type { AudioSink } from "../../src/tts/sinks.js";

export const TONE_FORMAT = int16Mono(24_000);

/** A sync provider: 100 bytes of audio per character, and the texts it was asked for. */
export function toneProvider(calls: string[] = []): SyncTtsProvider & { calls: string[] } {
  return {
    name: "tone",
    kind: "sync",
    format: TONE_FORMAT,
    calls,
    available: () => true,
    async synthesize(text) {
      calls.push(text);
      return { format: TONE_FORMAT, pcm: Buffer.alloc(text.length * 100, 1) };
    },
  };
}

/** A streamer: 10 bytes per character in two chunks, or a failure before any audio. */
export function toneStreamer(options: { fail?: boolean } = {}): StreamingTtsProvider & { calls: string[] } {
  const calls: string[] = [];
  return {
    name: "tonestream",
    kind: "streaming",
    format: TONE_FORMAT,
    calls,
    available: () => true,
    async *stream(text) {
      calls.push(text);
      if (options.fail) throw new TtsError("HTTP", "tonestream: refused", "tonestream");
      yield Buffer.alloc(text.length * 5, 2);
      yield Buffer.alloc(text.length * 5, 3);
    },
  };
}

export class MemorySink implements AudioSink {
  readonly name = "memory";
  readonly chunks: Buffer[] = [];
  interrupts = 0;
  private listeners: (() => void)[] = [];
  constructor(readonly format: PcmFormat = TONE_FORMAT) {}
  get bytes(): number {
    return this.chunks.reduce((n, c) => n + c.length, 0);
  }
  async write(pcm: Uint8Array): Promise<void> {
    this.chunks.push(Buffer.from(pcm));
    for (const listener of this.listeners.splice(0)) listener();
  }
  until(bytes: number): Promise<void> {
    if (this.bytes >= bytes) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => (this.bytes >= bytes ? resolve() : this.listeners.push(check));
      this.listeners.push(check);
    });
  }
  interrupt(): void {
    this.interrupts++;
  }
  async close(): Promise<void> {}
}
