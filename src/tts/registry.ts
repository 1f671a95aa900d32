/**
 * The built-in providers and the choice between them (seed 000 streaming-tts.md, "How to pick a provider").
 *
 * Rules, in order:
 * - `tts.streaming.provider` unset: stream with `tts.provider` when it has a chunked API; never swap the
 *   user's voice for another provider just to stream.
 * - A name pins that streamer; `auto` walks elevenlabs → gemini → openai → xai and takes the first whose
 *   credentials resolve; `off` never streams.
 * - Whatever does not stream is spoken sentence by sentence through a sync provider: `tts.provider` when it
 *   is one, else the local `espeak` (offline, no key). A streamer's failure before a sentence's first audio
 *   falls back to it too.
 */

import {
  AUTO_STREAMING_ORDER,
  type ProviderContext,
  type StreamingTtsProvider,
  type SyncTtsProvider,
  TtsError,
  TtsRegistry,
} from "./provider.js";
import { elevenlabsProvider } from "./providers/elevenlabs.js";
import { espeakProvider } from "./providers/espeak.js";
import { geminiProvider } from "./providers/gemini.js";
import { openaiProvider } from "./providers/openai.js";
import { xaiProvider } from "./providers/xai.js";

export const LOCAL_SYNC_PROVIDER = "espeak";

export function builtinTtsRegistry(): TtsRegistry {
  return new TtsRegistry()
    .register("openai", openaiProvider)
    .register("elevenlabs", elevenlabsProvider)
    .register("gemini", geminiProvider)
    .register("xai", xaiProvider)
    .register(LOCAL_SYNC_PROVIDER, espeakProvider);
}

export type SpeechPlan = {
  streamer?: StreamingTtsProvider;
  sync?: SyncTtsProvider;
  /** Why the plan is what it is, for `bdsh speak` and warnings (never a credential). */
  notes: string[];
};

export function planSpeech(registry: TtsRegistry, context: ProviderContext): SpeechPlan {
  const notes: string[] = [];
  const configured = registry.create(context.config.provider, context);
  const pin = context.config.streaming.provider;
  let streamer: StreamingTtsProvider | undefined;
  if (pin === undefined) {
    if (configured.kind === "streaming") streamer = configured;
  } else if (pin === "auto") {
    for (const name of AUTO_STREAMING_ORDER) {
      if (!registry.has(name)) continue;
      const candidate = registry.create(name, context);
      if (candidate.kind === "streaming" && candidate.available()) {
        streamer = candidate;
        break;
      }
    }
    if (!streamer) notes.push("tts.streaming.provider auto: no chunked provider has credentials");
  } else if (pin !== "off") {
    const pinned = registry.create(pin, context);
    if (pinned.kind !== "streaming")
      throw new TtsError("UNKNOWN_PROVIDER", `tts.streaming.provider ${pin} has no chunked API`, pin);
    streamer = pinned;
  }
  if (streamer && !streamer.available())
    notes.push(`${streamer.name} has no credentials; speaking sentence by sentence`);
  let sync: SyncTtsProvider | undefined;
  if (configured.kind === "sync") sync = configured;
  else if (registry.has(LOCAL_SYNC_PROVIDER)) {
    const local = registry.create(LOCAL_SYNC_PROVIDER, context);
    if (local.kind === "sync") sync = local;
  }
  if (sync && !sync.available()) notes.push(`${sync.name} is not installed`);
  return {
    ...(streamer?.available() ? { streamer } : {}),
    ...(sync ? { sync } : {}),
    notes,
  };
}
