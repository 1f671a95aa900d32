/**
 * Issue 20 items 3 and 4 (seed 000 streaming-tts.md, capability matrix): each chunked provider against a
 * local server speaking its wire format; the 16 MiB per-sentence cap; a failure before the first audio falls
 * back to the sync path sentence by sentence; secrets never in a report.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { StreamingTtsProvider } from "../../src/tts/provider.js";
import { builtinTtsRegistry } from "../../src/tts/registry.js";
import { SpeechStream, type TtsReport } from "../../src/tts/speech-stream.js";
import { MemorySink, toneProvider } from "./tone.js";
import {
  contextFor,
  gate,
  pieces,
  startWireServer,
  TEST_KEY,
  type WireName,
  type WireServer,
} from "./wire-servers.js";

const MiB = 1024 * 1024;

function streamerFor(server: WireServer): StreamingTtsProvider {
  const provider = builtinTtsRegistry().create(server.name, contextFor(server));
  if (provider.kind !== "streaming") throw new Error("not a streamer");
  return provider;
}

async function collect(provider: StreamingTtsProvider, text: string): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const chunk of provider.stream(text, new AbortController().signal)) out.push(Buffer.from(chunk));
  return Buffer.concat(out);
}

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("wire formats", () => {
  it("openai: POST /audio/speech with the key as a bearer token and response_format pcm", async () => {
    server = await startWireServer("openai", { chunks: () => pieces(Buffer.from([1, 0, 2, 0])) });
    expect(await collect(streamerFor(server), "Hello.")).toEqual(Buffer.from([1, 0, 2, 0]));
    const [request] = server.requests;
    expect(request?.path).toBe("/v1/audio/speech");
    expect(request?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(request?.body).toMatchObject({ input: "Hello.", response_format: "pcm" });
  });

  it("elevenlabs: POST /v1/text-to-speech/{voice}/stream?output_format=pcm_24000 with xi-api-key", async () => {
    server = await startWireServer("elevenlabs", { chunks: () => pieces(Buffer.from([3, 0])) });
    expect(await collect(streamerFor(server), "Hi.")).toEqual(Buffer.from([3, 0]));
    const [request] = server.requests;
    expect(request?.path).toMatch(/^\/v1\/text-to-speech\/[^/]+\/stream\?output_format=pcm_24000$/);
    expect(request?.headers["xi-api-key"]).toBe(TEST_KEY);
    expect(request?.body).toMatchObject({ text: "Hi." });
  });

  it("gemini: SSE from :streamGenerateContent?alt=sse, base64 PCM in inlineData", async () => {
    server = await startWireServer("gemini", {
      chunks: () => pieces(Buffer.from([5, 0]), Buffer.from([6, 0])),
    });
    expect(await collect(streamerFor(server), "Hey.")).toEqual(Buffer.from([5, 0, 6, 0]));
    const [request] = server.requests;
    expect(request?.path).toBe("/v1beta/models/gemini-2.5-flash-preview-tts:streamGenerateContent?alt=sse");
    expect(request?.headers["x-goog-api-key"]).toBe(TEST_KEY);
    expect(request?.body).toMatchObject({
      contents: [{ parts: [{ text: "Hey." }] }],
      generationConfig: { responseModalities: ["AUDIO"] },
    });
  });

  it("xai: a WebSocket with text.delta and text.done out, audio.delta frames back until audio.done", async () => {
    server = await startWireServer("xai", { chunks: () => pieces(Buffer.from([7, 0]), Buffer.from([8, 0])) });
    expect(await collect(streamerFor(server), "Yo.")).toEqual(Buffer.from([7, 0, 8, 0]));
    const [request] = server.requests;
    expect(request?.path).toMatch(/^\/v1\/tts\?.*codec=pcm/);
    expect(request?.path).toContain("sample_rate=24000");
    expect(request?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(request?.body).toEqual([{ type: "text.delta", delta: "Yo." }, { type: "text.done" }]);
  });
});

const WIRES: readonly WireName[] = ["openai", "elevenlabs", "gemini", "xai"];

describe.each(WIRES)("%s through SpeechStream", (name) => {
  it("yields the first chunk before the server has sent the rest", async () => {
    const held = gate();
    server = await startWireServer(name, {
      chunks: async function* () {
        yield Buffer.alloc(480, 1);
        await held.wait;
        yield Buffer.alloc(480, 2);
      },
    });
    const sink = new MemorySink();
    const speech = new SpeechStream({
      plan: { streamer: streamerFor(server), notes: [] },
      sink,
      maxChunkChars: 300,
      maxBodyBytes: 16 * MiB,
    });
    speech.push("First sentence. Second");
    await sink.until(480); // the first audio is in the sink while the server still holds the rest
    held.open();
    const outcome = await speech.end();
    expect(outcome.heard).toBe(true);
    expect(sink.bytes).toBeGreaterThanOrEqual(960);
  });

  it("cuts a sentence's body over 16 MiB at 16 MiB, reports it and cancels the request", async () => {
    server = await startWireServer(name, {
      chunks: async function* () {
        for (let i = 0; i < 48; i++) yield Buffer.alloc(MiB, i); // far more than socket buffers hold
      },
    });
    const reports: TtsReport[] = [];
    const sink = new MemorySink();
    const speech = new SpeechStream({
      plan: { streamer: streamerFor(server), notes: [] },
      sink,
      maxChunkChars: 300,
      maxBodyBytes: 16 * MiB,
      onReport: (r) => reports.push(r),
    });
    speech.push("A very long sentence.");
    await speech.end();
    expect(sink.bytes).toBe(16 * MiB);
    expect(reports).toEqual([{ kind: "capped", provider: name, bytes: 16 * MiB }]);
    await server.clientGone;
  });

  it("falls back to the sync provider sentence by sentence when it fails before the first audio", async () => {
    server = await startWireServer(name, {
      status: 500,
      errorBody: JSON.stringify({ error: `bad key ${TEST_KEY}` }),
    });
    const calls: string[] = [];
    const reports: TtsReport[] = [];
    const sink = new MemorySink();
    const speech = new SpeechStream({
      plan: { streamer: streamerFor(server), sync: toneProvider(calls), notes: [] },
      sink,
      maxChunkChars: 300,
      maxBodyBytes: 16 * MiB,
      onReport: (r) => reports.push(r),
    });
    speech.push("One. Two. ");
    speech.push("Three.");
    const outcome = await speech.end();
    expect(calls).toEqual(["One.", "Two.", "Three."]);
    expect(sink.bytes).toBe(("One.".length + "Two.".length + "Three.".length) * 100);
    expect(outcome).toMatchObject({ heard: true, streamFailed: true, sentences: 3 });
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ kind: "fallback", provider: name });
    expect(JSON.stringify(reports)).not.toContain(TEST_KEY);
  });
});
