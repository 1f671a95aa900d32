/**
 * The provider contract and registry (seed 000 streaming-tts.md, "Adding a new streaming provider").
 *
 * Invariants:
 * - A provider declares its PCM `format` (int16 mono unless it says `channels`/`sampleWidth`).
 * - `available()` is a pure probe: it reads configuration, the environment it was given and the file
 *   system, never the network, and never installs anything. It may be called on every paint.
 * - A streaming provider's `stream(text, signal)` yields raw PCM chunks as they arrive; a sync provider's
 *   `synthesize(text, signal)` returns one sentence's whole audio. Aborting `signal` ends either at once.
 * - Failures are `TtsError` values with a code; their messages never contain a credential.
 * - Providers are registered by name in a `TtsRegistry` built by the entry point (no process-wide table).
 */
import type { Config } from "../config/schema.js";
import type { PcmFormat } from "./pcm.js";

export type TtsErrorCode =
  | "NO_CREDENTIALS"
  | "HTTP"
  | "NETWORK"
  | "MALFORMED"
  | "BODY_TOO_LARGE"
  | "NOT_INSTALLED"
  | "PROCESS"
  | "ABORTED"
  | "UNKNOWN_PROVIDER";

export class TtsError extends Error {
  constructor(
    readonly code: TtsErrorCode,
    message: string,
    readonly provider?: string,
  ) {
    super(message);
    this.name = "TtsError";
  }
}

type ProviderBase = {
  readonly name: string;
  readonly format: PcmFormat;
  available(): boolean;
};

export type StreamingTtsProvider = ProviderBase & {
  readonly kind: "streaming";
  stream(text: string, signal: AbortSignal): AsyncIterable<Uint8Array>;
};

export type SyncTtsProvider = ProviderBase & {
  readonly kind: "sync";
  /** One sentence's audio; `format` is what was produced (a WAV header may say better than the declaration). */
  synthesize(text: string, signal: AbortSignal): Promise<{ format: PcmFormat; pcm: Uint8Array }>;
};

export type TtsProvider = StreamingTtsProvider | SyncTtsProvider;

/** What a provider is built from. `fetch` and `env` are given so tests and hosts decide them. */
export type ProviderContext = {
  config: Config["tts"];
  env: Readonly<Record<string, string | undefined>>;
  fetch: typeof fetch;
};

export type ProviderFactory = (context: ProviderContext) => TtsProvider;

/** Seed 000: the streamers `auto` walks, in this order. */
export const AUTO_STREAMING_ORDER = ["elevenlabs", "gemini", "openai", "xai"] as const;

export class TtsRegistry {
  private readonly factories = new Map<string, ProviderFactory>();

  register(name: string, factory: ProviderFactory): this {
    if (this.factories.has(name)) throw new Error(`a TTS provider named ${name} is already registered`);
    this.factories.set(name, factory);
    return this;
  }

  names(): string[] {
    return [...this.factories.keys()];
  }

  has(name: string): boolean {
    return this.factories.has(name);
  }

  create(name: string, context: ProviderContext): TtsProvider {
    const factory = this.factories.get(name);
    if (!factory)
      throw new TtsError(
        "UNKNOWN_PROVIDER",
        `no TTS provider named ${name} (known: ${this.names().join(", ")})`,
      );
    return factory(context);
  }
}
