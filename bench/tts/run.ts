/**
 * Streaming TTS benchmark (issue 20): time from the model's first text delta to the first PCM byte, on a
 * 10-sentence reply, streaming sentence by sentence versus whole-reply synthesis.
 *
 *   node --import tsx bench/tts/run.ts [runs]
 *
 * Two pairs, each on the same reply and the same deltas:
 * - chunked: a local server on the openai wire (`POST /audio/speech`, chunked PCM) that models a provider:
 *   first audio after `TTFB_MS`, then audio produced at `SPEED`× real time (speech at `SECONDS_PER_CHAR`).
 *   Streaming: SpeechStream sends each sentence as soon as the chunker completes it. Whole reply: the full
 *   text is sent after the model's stream ends and the body is read to its end (the whole-file path).
 * - espeak-ng (when installed): real local synthesis, per-sentence (the sync fallback) versus the whole reply.
 * The model streams `DELTA_CHARS` characters every `DELTA_MS` (about 80 tokens a second).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { findBinary } from "../../src/tts/binaries.js";
import { int16Mono } from "../../src/tts/pcm.js";
import type { StreamingTtsProvider, SyncTtsProvider } from "../../src/tts/provider.js";
import { espeakProvider } from "../../src/tts/providers/espeak.js";
import { openaiProvider } from "../../src/tts/providers/openai.js";
import type { AudioSink } from "../../src/tts/sinks.js";
import { SpeechStream } from "../../src/tts/speech-stream.js";
import { spokenText } from "../../src/tts/spoken-text.js";

const RUNS = Number(process.argv[2] ?? 5);
const DELTA_CHARS = 5;
const DELTA_MS = 15;
const TTFB_MS = 80;
const SPEED = 4;
const SECONDS_PER_CHAR = 0.065;
const FORMAT = int16Mono(24_000);

const REPLY = [
  "Here is what I found in the repository.",
  "The build script calls the compiler twice, once for each target.",
  "The second call reuses the cache from the first one.",
  "That is why the second build is so much faster.",
  "The test suite runs after both builds finish.",
  "It takes about forty seconds on this machine.",
  "Most of that time goes to the database tests.",
  "They start a fresh database for every file.",
  "Sharing one database would cut the time in half.",
  "I can make that change if you want.",
].join(" ");

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startVoiceServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on("data", (c: Buffer) => body.push(c));
    req.on("end", async () => {
      const { input } = JSON.parse(Buffer.concat(body).toString()) as { input: string };
      res.writeHead(200, { "content-type": "application/octet-stream" });
      await sleep(TTFB_MS);
      // Audio of the whole input, produced at SPEED× real time in 100 ms pieces.
      const totalBytes = Math.round(input.length * SECONDS_PER_CHAR * FORMAT.sampleRate) * 2;
      const piece = FORMAT.sampleRate * 2 * 0.1;
      for (let sent = 0; sent < totalBytes && !res.destroyed; sent += piece) {
        res.write(Buffer.alloc(Math.min(piece, totalBytes - sent), 1));
        await sleep(100 / SPEED);
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Streams the reply as the model would; calls `onDelta` for each piece. */
async function modelStream(onDelta: (text: string) => void): Promise<void> {
  for (let i = 0; i < REPLY.length; i += DELTA_CHARS) {
    onDelta(REPLY.slice(i, i + DELTA_CHARS));
    await sleep(DELTA_MS);
  }
}

function firstByteSink(): AudioSink & { first?: number } {
  const sink: AudioSink & { first?: number } = {
    name: "timer",
    format: FORMAT,
    write: async () => {
      sink.first ??= performance.now();
    },
    interrupt: () => undefined,
    close: async () => undefined,
  };
  return sink;
}

/** Streaming: deltas into SpeechStream; ms from the first delta to the first PCM byte. */
async function streamed(plan: { streamer?: StreamingTtsProvider; sync?: SyncTtsProvider }): Promise<number> {
  const sink = firstByteSink();
  const speech = new SpeechStream({
    plan: { ...plan, notes: [] },
    sink,
    maxChunkChars: 300,
    maxBodyBytes: 1 << 24,
  });
  const start = performance.now();
  const model = modelStream((delta) => speech.push(delta));
  while (sink.first === undefined) await sleep(1);
  const ms = sink.first - start;
  await model;
  await speech.stop();
  return ms;
}

/** Whole reply: wait for the model's end, synthesize everything, first byte when the file is whole. */
async function whole(synthesize: (text: string) => Promise<number>): Promise<number> {
  let text = "";
  const start = performance.now();
  await modelStream((delta) => {
    text += delta;
  });
  const bytes = await synthesize(spokenText(text));
  if (bytes === 0) throw new Error("no audio");
  return performance.now() - start;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function pair(
  name: string,
  stream: () => Promise<number>,
  full: () => Promise<number>,
): Promise<string> {
  const a: number[] = [];
  const b: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    a.push(await stream());
    b.push(await full());
  }
  const s = median(a);
  const w = median(b);
  return `| ${name} | ${s.toFixed(0)} ms | ${w.toFixed(0)} ms | ${(w / s).toFixed(1)}× |`;
}

async function main(): Promise<void> {
  const voice = await startVoiceServer();
  const config = structuredClone(DEFAULT_CONFIG.tts);
  config.openai = { api_key: "bench-key-not-secret", base_url: voice.url };
  const context = { config, env: { PATH: process.env.PATH }, fetch: globalThis.fetch };
  const openai = openaiProvider(context);
  const rows: string[] = [];
  rows.push(
    await pair(
      "chunked (openai wire, local server)",
      () => streamed({ streamer: openai }),
      () =>
        whole(async (text) => {
          let bytes = 0;
          for await (const chunk of openai.stream(text, new AbortController().signal))
            bytes += chunk.byteLength;
          return bytes;
        }),
    ),
  );
  if (findBinary("espeak-ng", process.env)) {
    const espeak = espeakProvider(context);
    rows.push(
      await pair(
        "espeak-ng (sync, per sentence)",
        () => streamed({ sync: espeak }),
        () =>
          whole(async (text) => (await espeak.synthesize(text, new AbortController().signal)).pcm.byteLength),
      ),
    );
  } else rows.push("| espeak-ng | not installed | | |");
  await voice.close();
  console.log(
    `10-sentence reply (${REPLY.length} characters), model ${DELTA_CHARS} characters every ${DELTA_MS} ms; voice server: first audio after ${TTFB_MS} ms, ${SPEED}× real time; median of ${RUNS} runs`,
  );
  console.log("");
  console.log("| path | first delta → first PCM, streaming | whole-reply synthesis | sooner |");
  console.log("| --- | --- | --- | --- |");
  for (const row of rows) console.log(row);
}

await main();
