/** Issue 20 items 3 and 5: SpeechStream order, stop and interrupt; the WAV sink; the espeak-ng provider. */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { findBinary } from "../../src/tts/binaries.js";
import { convertPcm, durationOf, int16Mono, parseWav } from "../../src/tts/pcm.js";
import type { StreamingTtsProvider } from "../../src/tts/provider.js";
import { espeakProvider } from "../../src/tts/providers/espeak.js";
import { detectPlayer, WavFileSink } from "../../src/tts/sinks.js";
import { SpeechStream } from "../../src/tts/speech-stream.js";
import { MemorySink, TONE_FORMAT, toneProvider } from "./tone.js";

const HAS_ESPEAK = findBinary("espeak-ng", process.env) !== undefined;

/** A streamer that yields one chunk and then waits until its signal is aborted. */
function hangingStreamer(): StreamingTtsProvider & { aborted: Promise<void> } {
  let aborted!: () => void;
  const done = new Promise<void>((resolve) => {
    aborted = resolve;
  });
  return {
    name: "hang",
    kind: "streaming",
    format: TONE_FORMAT,
    aborted: done,
    available: () => true,
    async *stream(_text, signal) {
      yield Buffer.alloc(100, 1);
      if (!signal.aborted)
        await new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => resolve(), { once: true }),
        );
      aborted();
    },
  };
}

describe("SpeechStream", () => {
  it("speaks sentences in order, each cleaned, skipping what cleans to nothing", async () => {
    const sync = toneProvider();
    const sink = new MemorySink();
    const speech = new SpeechStream({
      plan: { sync, notes: [] },
      sink,
      maxChunkChars: 300,
      maxBodyBytes: 1 << 24,
    });
    speech.push("# Title\n\nFirst **bold**. 🎉🎉. <think>hidden. </think>Last one.");
    const outcome = await speech.end();
    expect(sync.calls).toEqual(["Title.", "First bold.", "Last one."]);
    expect(outcome).toMatchObject({ sentences: 3, heard: true, stopped: false });
  });

  it("a stop aborts the request in flight and interrupts the sink at once", async () => {
    const streamer = hangingStreamer();
    const sink = new MemorySink();
    const speech = new SpeechStream({
      plan: { streamer, notes: [] },
      sink,
      maxChunkChars: 300,
      maxBodyBytes: 1 << 24,
    });
    speech.push("One sentence. Another one. ");
    await sink.until(100);
    const outcome = await speech.stop();
    await streamer.aborted;
    expect(sink.interrupts).toBe(1);
    expect(outcome).toMatchObject({ stopped: true, sentences: 1 });
  });

  it("an interrupt drops what is queued and the next reply is spoken on the same sink", async () => {
    const sync = toneProvider();
    const sink = new MemorySink();
    const speech = new SpeechStream({
      plan: { sync, notes: [] },
      sink,
      maxChunkChars: 300,
      maxBodyBytes: 1 << 24,
    });
    speech.push("Dropped before it is said");
    speech.interrupt();
    speech.push("Next reply.");
    speech.flush();
    speech.push("And the last.");
    await speech.end();
    expect(sync.calls).toEqual(["Next reply.", "And the last."]);
  });
});

describe("WAV sink", () => {
  it("is a valid WAV after every write, its header's length the data's", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "bdsh-wav-")), "out.wav");
    const sink = new WavFileSink(path, int16Mono(16_000));
    for (const size of [0, 3200, 16_000]) {
      await sink.write(Buffer.alloc(size, 7));
      const parsed = parseWav(readFileSync(path));
      expect(parsed?.format).toEqual(int16Mono(16_000));
      expect(parsed?.data.length).toBe(sink.dataBytes);
    }
    await sink.close();
    expect(durationOf(sink.dataBytes, int16Mono(16_000))).toBeCloseTo(0.6);
  });

  it("PCM at another rate or width is converted to the sink's format", () => {
    const out = convertPcm(Buffer.alloc(2 * 22_050), int16Mono(22_050), int16Mono(24_000));
    expect(out.length).toBe(2 * 24_000);
  });
});

describe("players", () => {
  it("are detected on PATH, never required", () => {
    expect(detectPlayer({ PATH: "/nonexistent" })).toBeUndefined();
  });
});

describe.skipIf(!HAS_ESPEAK)(
  "espeak-ng, the local default (needs espeak-ng; skipped when it is not installed)",
  () => {
    it("renders a sentence to PCM offline, even one that starts like an option", async () => {
      const provider = espeakProvider({
        config: DEFAULT_CONFIG.tts,
        env: { PATH: process.env.PATH },
        fetch: globalThis.fetch,
      });
      expect(provider.available()).toBe(true);
      const audio = await provider.synthesize(
        "--version is not an option here.",
        new AbortController().signal,
      );
      expect(audio.format.sampleRate).toBe(22_050);
      expect(durationOf(audio.pcm.byteLength, audio.format)).toBeGreaterThan(0.5);
    });

    it("is not available without the binary on PATH", () => {
      expect(
        espeakProvider({
          config: DEFAULT_CONFIG.tts,
          env: { PATH: "/nonexistent" },
          fetch: globalThis.fetch,
        }).available(),
      ).toBe(false);
    });
  },
);

describe("PCM chunks that end inside a frame", () => {
  it("are joined before conversion, so no sample is lost or shifted", async () => {
    const from = int16Mono(24_000);
    const streamer: StreamingTtsProvider = {
      name: "odd",
      kind: "streaming",
      format: from,
      available: () => true,
      async *stream() {
        const samples = Buffer.alloc(2 * 240);
        for (let i = 0; i < 240; i++) samples.writeInt16LE(1000, i * 2);
        yield samples.subarray(0, 101); // ends inside a sample
        yield samples.subarray(101);
      },
    };
    const sink = new MemorySink({ sampleRate: 24_000, channels: 2, sampleWidth: 2 });
    const speech = new SpeechStream({
      plan: { streamer, notes: [] },
      sink,
      maxChunkChars: 300,
      maxBodyBytes: 1 << 24,
    });
    speech.push("Stereo now.");
    await speech.end();
    const out = Buffer.concat(sink.chunks);
    expect(out.length).toBe(240 * 4);
    for (let i = 0; i < out.length; i += 2) expect(out.readInt16LE(i)).toBe(1000);
  });
});
