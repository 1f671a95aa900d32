/**
 * A session's event stream in the browser: `GET v1/sessions/:id/events` read with
 * `fetch` (the browser's EventSource cannot send the bearer token), parsed as Server-Sent Events.
 *
 * Invariants:
 * - Each durable event is handed on once, in seq order: the feed keeps the last seq it delivered, sends it
 *   as `Last-Event-ID` on every reconnect, and drops anything at or below it. A jump past the next seq
 *   (never sent by a sound server) reconnects from the last one rather than leave a gap.
 * - A dropped connection (network, proxy, a server that stopped or was killed) reconnects with back-off
 *   from 250 ms to 5 s; the state goes `reconnecting` and back to `live`, which the view shows as a short
 *   notice. Silence longer than three keep-alives counts as a drop.
 * - A 401 ends the feed and signs the user out; a 404 ends it with an error.
 * - Events are delivered in batches (one per chunk read), so a session of 10,000 events renders once per
 *   chunk, not once per event.
 * - What is stored when the feed starts comes as gzip-compressed JSON pages (`v1/sessions/:id/history`),
 *   the same objects as the stream's; the stream then resumes after the last of them.
 */
import { createParser } from "eventsource-parser";
import type { Api } from "./api.js";
import { apiUrl } from "./api.js";
import type { Delta, LiveReply, LogEvent } from "./types.js";

export type FeedState = "connecting" | "live" | "reconnecting" | "closed";

export type FeedHandlers = {
  events(batch: LogEvent[]): void;
  delta?(delta: Delta): void;
  /** The reply streamed so far, sent once when the stream attaches to the driving agent mid-reply. */
  live?(live: LiveReply): void;
  state?(state: FeedState, detail?: string): void;
};

const KEEP_ALIVE_MS = 15_000;
const SILENCE_MS = 3 * KEEP_ALIVE_MS + 5_000;
const MIN_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5_000;

export class EventFeed {
  private lastSeq: number;
  private abort: AbortController | undefined;
  private stopped = false;
  private backoff = MIN_BACKOFF_MS;

  constructor(
    private readonly api: Api,
    private readonly sessionId: string,
    private readonly handlers: FeedHandlers,
    after = 0,
  ) {
    this.lastSeq = after;
  }

  get seq(): number {
    return this.lastSeq;
  }

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
    this.handlers.state?.("closed");
  }

  /** Drops the current connection (it then reconnects as after any drop). */
  reconnect(): void {
    this.abort?.abort();
  }

  /**
   * The stored log first, as gzip-compressed JSON pages (a long session costs a fraction of the bytes it
   * would as a stream); the stream then starts after the last seq delivered. Any failure here leaves the
   * rest to the stream, which reads from the same seq.
   */
  private async loadHistory(): Promise<void> {
    const abort = new AbortController();
    this.abort = abort;
    try {
      for (;;) {
        const page = await this.api.history(this.sessionId, this.lastSeq, abort.signal);
        if (this.stopped) return;
        const batch: LogEvent[] = [];
        for (const event of page.events) {
          if (event.seq <= this.lastSeq) continue;
          if (event.seq !== this.lastSeq + 1) break; // never from a sound server; the stream fills it
          this.lastSeq = event.seq;
          batch.push(event);
        }
        if (batch.length) this.handlers.events(batch);
        if (!page.more || batch.length === 0) return;
      }
    } catch {
      // The stream reads from `lastSeq` and says what went wrong, if anything still does.
    } finally {
      if (this.abort === abort) this.abort = undefined;
    }
  }

  private async run(): Promise<void> {
    this.handlers.state?.("connecting");
    await this.loadHistory();
    let first = true;
    while (!this.stopped) {
      this.handlers.state?.(first ? "connecting" : "reconnecting");
      first = false;
      const outcome = await this.connect().catch((error: unknown) => ({
        retry: true,
        detail: String(error),
      }));
      if (this.stopped) return;
      if (!outcome.retry) {
        this.stopped = true;
        this.handlers.state?.("closed", outcome.detail);
        return;
      }
      this.handlers.state?.("reconnecting", outcome.detail);
      await sleep(this.backoff * (0.8 + Math.random() * 0.4));
      this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
    }
  }

  /** One connection: resolves when it ends, saying whether to try again. */
  private async connect(): Promise<{ retry: boolean; detail?: string }> {
    const abort = new AbortController();
    this.abort = abort;
    let silence: ReturnType<typeof setTimeout> | undefined;
    const heard = () => {
      clearTimeout(silence);
      silence = setTimeout(() => abort.abort(), SILENCE_MS);
    };
    try {
      const url = apiUrl(`v1/sessions/${encodeURIComponent(this.sessionId)}/events?after=${this.lastSeq}`);
      const headers = this.api.headers({ accept: "text/event-stream" });
      if (this.lastSeq > 0) headers["last-event-id"] = String(this.lastSeq);
      heard();
      const response = await fetch(url, { headers, signal: abort.signal, cache: "no-store" });
      if (response.status === 401) {
        await this.api.request("GET", "v1/sessions?limit=1").catch(() => undefined); // signs out
        return { retry: false, detail: "unauthorized" };
      }
      if (response.status === 404) return { retry: false, detail: "no such session" };
      if (!response.ok || !response.body) return { retry: true, detail: `HTTP ${response.status}` };
      this.handlers.state?.("live");
      let batch: LogEvent[] = [];
      let gap = false;
      const parser = createParser({
        onEvent: (message) => {
          if (message.event === "delta") {
            const delta = parse<Delta>(message.data);
            if (delta) this.handlers.delta?.(delta);
            return;
          }
          if (message.event === "live") {
            const live = parse<LiveReply>(message.data);
            if (live) this.handlers.live?.(live);
            return;
          }
          const event = parse<LogEvent>(message.data);
          if (!event || typeof event.seq !== "number" || event.seq <= this.lastSeq || gap) return;
          if (event.seq !== this.lastSeq + 1) {
            gap = true; // reconnect from the last seq delivered
            return;
          }
          this.lastSeq = event.seq;
          batch.push(event);
        },
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        heard();
        this.backoff = MIN_BACKOFF_MS;
        parser.feed(value);
        if (batch.length) {
          const delivered = batch;
          batch = [];
          this.handlers.events(delivered);
        }
        if (gap) {
          abort.abort();
          break;
        }
      }
      return { retry: true, detail: "the stream ended" };
    } finally {
      clearTimeout(silence);
      if (this.abort === abort) this.abort = undefined;
    }
  }
}

function parse<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
