/**
 * The gateway seam (seed 000 streaming-tts.md, "Gateway streaming"): a transport that can play audio to a
 * session's listeners opts in by implementing `StreamingTtsAdapter`; `StreamingTtsConsumer` bridges a
 * session's text deltas to it, turn by turn.
 *
 * Invariants:
 * - Every adapter method defaults to unsupported / no-op (`UNSUPPORTED_TTS_ADAPTER`, `withTtsDefaults`), so a
 *   transport that does nothing is valid.
 * - A turn is streamed only when the adapter supports the format for that session when the turn starts.
 * - When a turn's streamed audio completes, the whole-file reply for that turn is suppressed (no double
 *   playback). When streaming fails before any audio was heard, or the turn was joined after it began, the
 *   whole-file reply (the turn's full text, synthesized at once) is sent instead. Audio that was heard and
 *   then broke is finished, not repeated.
 * - `stop(turn)` (a steer, a cancel) aborts that turn's audio at once; that turn gets no whole-file reply.
 *   Text of the same turn after a steer (the model answering it) is streamed afresh.
 */
import type { PcmFormat } from "./pcm.js";
import type { SyncTtsProvider } from "./provider.js";
import type { SpeechPlan } from "./registry.js";
import type { AudioSink } from "./sinks.js";
import { SpeechStream, type TtsReport } from "./speech-stream.js";
import { spokenText } from "./spoken-text.js";

export type StreamingTtsAdapter = {
  supportsStreamingTts(sessionId: string, format: PcmFormat): boolean;
  begin(sessionId: string, turn: number, format: PcmFormat): void | Promise<void>;
  write(sessionId: string, turn: number, pcm: Uint8Array): void | Promise<void>;
  finish(sessionId: string, turn: number): void | Promise<void>;
  abort(sessionId: string, turn: number, reason: string): void | Promise<void>;
  /** The whole-file reply for a turn that was not streamed. */
  wholeReply(sessionId: string, turn: number, format: PcmFormat, pcm: Uint8Array): void | Promise<void>;
};

export const UNSUPPORTED_TTS_ADAPTER: StreamingTtsAdapter = {
  supportsStreamingTts: () => false,
  begin: () => undefined,
  write: () => undefined,
  finish: () => undefined,
  abort: () => undefined,
  wholeReply: () => undefined,
};

/** An adapter from only the methods a transport overrides. */
export function withTtsDefaults(partial: Partial<StreamingTtsAdapter>): StreamingTtsAdapter {
  return { ...UNSUPPORTED_TTS_ADAPTER, ...partial };
}

export type TurnSpeechResult = "streamed" | "whole-file" | "stopped" | "silent";

/** `stopped`: the turn's audio was stopped; text after the stop starts a fresh stream of the same turn. */
type ActiveTurn = { turn: number; speech?: SpeechStream; late: boolean; stopped?: boolean; muted?: boolean };

export type StreamingTtsConsumerOptions = {
  sessionId: string;
  adapter: StreamingTtsAdapter;
  plan: SpeechPlan;
  maxChunkChars: number;
  maxBodyBytes: number;
  onReport?: (report: TtsReport) => void;
};

export class StreamingTtsConsumer {
  private active: ActiveTurn | undefined;

  constructor(private readonly options: StreamingTtsConsumerOptions) {}

  /** A turn begins; `late` when the consumer joined after its first delta (it is then not streamed). */
  startTurn(turn: number, late = false): void {
    if (this.active?.turn === turn) return;
    void this.active?.speech?.stop();
    this.begin(turn, late, false);
  }

  private begin(turn: number, late: boolean, stopped: boolean): void {
    const { adapter, sessionId, plan } = this.options;
    const streamer = plan.streamer;
    if (late || !streamer || !adapter.supportsStreamingTts(sessionId, streamer.format)) {
      this.active = { turn, late: true, stopped };
      return;
    }
    let begun = false;
    const sink: AudioSink = {
      name: "gateway",
      format: streamer.format,
      write: async (pcm) => {
        if (!begun) {
          begun = true;
          await adapter.begin(sessionId, turn, streamer.format);
        }
        await adapter.write(sessionId, turn, pcm);
      },
      interrupt: () => undefined,
      close: async () => undefined,
    };
    // Only the streamer: a failure before the first audio is answered with the whole-file reply instead.
    const speech = new SpeechStream({
      plan: { streamer, notes: [] },
      sink,
      maxChunkChars: this.options.maxChunkChars,
      maxBodyBytes: this.options.maxBodyBytes,
      ...(this.options.onReport ? { onReport: this.options.onReport } : {}),
    });
    this.active = { turn, speech, late: false, stopped };
  }

  delta(turn: number, text: string): void {
    if (this.active?.turn !== turn) this.startTurn(turn, true);
    if (this.active?.muted) this.begin(turn, false, true); // the reply goes on after a steer: a new stream
    this.active?.speech?.push(text);
  }

  /** Stops the turn's audio now (a steer or a cancel). */
  async stop(turn: number): Promise<void> {
    const active = this.active;
    // Nothing of a stopped turn is repeated: no whole-file reply; text that follows is a fresh stream.
    this.active = { turn, late: false, stopped: true, muted: true };
    if (active?.turn === turn && active.speech) {
      await active.speech.stop();
      await this.options.adapter.abort(this.options.sessionId, turn, "stopped");
    }
  }

  /** The turn ended with this reply text: finish the stream, or send the whole-file reply. */
  async endTurn(turn: number, replyText: string): Promise<TurnSpeechResult> {
    const active = this.active?.turn === turn ? this.active : { turn, late: true };
    this.active = undefined;
    const { adapter, sessionId } = this.options;
    if (active.muted) return "stopped";
    if (active.speech) {
      const outcome = await active.speech.end();
      if (outcome.stopped) return "stopped";
      if (outcome.heard) {
        await adapter.finish(sessionId, turn);
        return "streamed"; // the whole-file reply is suppressed
      }
      await adapter.abort(sessionId, turn, "no audio");
    }
    if (active.stopped) return "stopped"; // a whole-file reply would repeat what was stopped
    return this.sendWholeReply(turn, replyText);
  }

  private async sendWholeReply(turn: number, replyText: string): Promise<TurnSpeechResult> {
    const sync: SyncTtsProvider | undefined = this.options.plan.sync;
    const text = spokenText(replyText);
    if (!sync || text === "") return "silent";
    try {
      const audio = await sync.synthesize(text, new AbortController().signal);
      await this.options.adapter.wholeReply(this.options.sessionId, turn, audio.format, audio.pcm);
      return "whole-file";
    } catch (error) {
      this.options.onReport?.({
        kind: "failed",
        provider: sync.name,
        code: "PROCESS",
        message: error instanceof Error ? error.message : String(error),
      });
      return "silent";
    }
  }
}
