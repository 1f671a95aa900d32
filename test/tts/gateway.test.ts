/** Issue 20 item 6 (seed 000 streaming-tts.md, "Gateway streaming"): the adapter seam and its consumer. */
import { describe, expect, it } from "vitest";
import { StreamingTtsConsumer, UNSUPPORTED_TTS_ADAPTER, withTtsDefaults } from "../../src/tts/gateway.js";
import type { SpeechPlan } from "../../src/tts/registry.js";
import { toneProvider, toneStreamer } from "./tone.js";

type Call = [string, ...unknown[]];

function recordingAdapter(supported = true) {
  const calls: Call[] = [];
  const adapter = withTtsDefaults({
    supportsStreamingTts: () => supported,
    begin: (_s, turn, format) => void calls.push(["begin", turn, format.sampleRate]),
    write: (_s, turn, pcm) => void calls.push(["write", turn, pcm.byteLength]),
    finish: (_s, turn) => void calls.push(["finish", turn]),
    abort: (_s, turn, reason) => void calls.push(["abort", turn, reason]),
    wholeReply: (_s, turn, _f, pcm) => void calls.push(["whole", turn, pcm.byteLength]),
  });
  return { adapter, calls };
}

function consumer(plan: SpeechPlan, supported = true) {
  const { adapter, calls } = recordingAdapter(supported);
  const c = new StreamingTtsConsumer({
    sessionId: "s1",
    adapter,
    plan,
    maxChunkChars: 300,
    maxBodyBytes: 1 << 24,
  });
  return { c, calls };
}

describe("StreamingTtsAdapter defaults", () => {
  it("every method defaults to unsupported or no-op", async () => {
    const format = { sampleRate: 24_000, channels: 1, sampleWidth: 2 };
    expect(UNSUPPORTED_TTS_ADAPTER.supportsStreamingTts("s", format)).toBe(false);
    expect(await UNSUPPORTED_TTS_ADAPTER.begin("s", 1, format)).toBeUndefined();
    const partial = withTtsDefaults({ finish: () => undefined });
    expect(partial.supportsStreamingTts("s", format)).toBe(false);
  });
});

describe("StreamingTtsConsumer (Hermes gateway seam)", () => {
  it("streams a turn, finishes it, and suppresses the whole-file reply", async () => {
    const sync = toneProvider();
    const { c, calls } = consumer({ streamer: toneStreamer(), sync, notes: [] });
    c.startTurn(1);
    c.delta(1, "Hello there. ");
    c.delta(1, "Bye.");
    expect(await c.endTurn(1, "Hello there. Bye.")).toBe("streamed");
    expect(calls[0]).toEqual(["begin", 1, 24_000]);
    expect(calls.at(-1)).toEqual(["finish", 1]);
    expect(calls.filter((call) => call[0] === "whole")).toEqual([]);
    expect(sync.calls).toEqual([]);
  });

  it("sends the whole-file reply when streaming fails before any audio was heard", async () => {
    const sync = toneProvider();
    const { c, calls } = consumer({ streamer: toneStreamer({ fail: true }), sync, notes: [] });
    c.startTurn(2);
    c.delta(2, "**Hi** there. More.");
    expect(await c.endTurn(2, "**Hi** there. More.")).toBe("whole-file");
    expect(calls).toEqual([
      ["abort", 2, "no audio"],
      ["whole", 2, "Hi there. More.".length * 100],
    ]);
    expect(sync.calls).toEqual(["Hi there. More."]); // the one cleaner, on the whole-file path too
  });

  it("a transport that does not support streaming gets the whole-file reply", async () => {
    const { c, calls } = consumer({ streamer: toneStreamer(), sync: toneProvider(), notes: [] }, false);
    c.startTurn(1);
    c.delta(1, "Hello.");
    expect(await c.endTurn(1, "Hello.")).toBe("whole-file");
    expect(calls.map((call) => call[0])).toEqual(["whole"]);
  });

  it("a turn joined late is not streamed; its whole reply is sent at its end", async () => {
    const streamer = toneStreamer();
    const { c, calls } = consumer({ streamer, sync: toneProvider(), notes: [] });
    c.delta(4, "…the end of a sentence. Next.");
    expect(await c.endTurn(4, "Start of it, and the end of a sentence. Next.")).toBe("whole-file");
    expect(streamer.calls).toEqual([]);
    expect(calls.map((call) => call[0])).toEqual(["whole"]);
  });

  it("a stop aborts the turn's audio; nothing of it is repeated as a whole-file reply", async () => {
    const sync = toneProvider();
    const { c, calls } = consumer({ streamer: toneStreamer(), sync, notes: [] });
    c.startTurn(3);
    c.delta(3, "One. ");
    await c.stop(3);
    expect(await c.endTurn(3, "One.")).toBe("stopped");
    expect(calls.at(-1)).toEqual(["abort", 3, "stopped"]);
    expect(calls.filter((call) => call[0] === "whole")).toEqual([]);
    expect(sync.calls).toEqual([]);
  });

  it("after a steer, the rest of the turn (the answer to it) is a fresh stream", async () => {
    const streamer = toneStreamer();
    const { c, calls } = consumer({ streamer, sync: toneProvider(), notes: [] });
    c.startTurn(5);
    c.delta(5, "Before the steer");
    await c.stop(5);
    c.delta(5, "After it. Done.");
    expect(await c.endTurn(5, "Before the steer. After it. Done.")).toBe("streamed");
    expect(streamer.calls).toEqual(["After it.", "Done."]);
    expect(calls.filter((call) => call[0] === "begin")).toEqual([["begin", 5, 24_000]]);
    expect(calls.at(-1)).toEqual(["finish", 5]);
  });
});
