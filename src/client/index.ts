/**
 * `better-dsh/client`: a typed client for the HTTP API of `bdsh serve`.
 *
 *   import { createBdshClient } from "better-dsh/client";
 *   const bdsh = createBdshClient({ baseUrl: "http://127.0.0.1:8080", token: process.env.BDSH_SERVER_TOKEN });
 *   const { data: session } = await bdsh.POST("/v1/sessions", { body: { text: "fix the failing test" } });
 *   for await (const event of bdsh.events(session.id)) console.log(event.type);
 *
 * Invariants:
 * - Every path, parameter, body and response is typed from the server's own OpenAPI document (./api.ts,
 *   generated at build time by scripts/generate-client.ts); the calls are `openapi-fetch`'s.
 * - `events()` yields the durable events of a session in `seq` order, each once: when the connection drops
 *   it reconnects with `Last-Event-ID` set to the last seq it yielded (the server's resume cursor), after
 *   a short backoff. Ephemeral `delta` frames are skipped unless asked for; they have no id and are never
 *   replayed. The SSE framing is `eventsource-parser`'s.
 * - The token goes in the `Authorization` header of every request and nowhere else.
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import createClient, { type Client } from "openapi-fetch";
import type { LogEvent } from "../log/events.js";
import type { paths } from "./api.js";

export type { paths } from "./api.js";

export type BdshClientOptions = {
  /** The server's origin (and prefix, if the plugin is mounted under one), e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The bearer token (`BDSH_SERVER_TOKEN`, or the one `bdsh serve` printed). */
  token: string;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
};

export type LiveDeltaFrame = { type: "text" | "reasoning"; delta: string; turn: number; step: number };

export type StreamOptions = {
  /** Start after this seq (default 0: from the first event). */
  after?: number;
  signal?: AbortSignal;
  /** Also yield live `delta` frames while the serving process drives the session. */
  deltas?: boolean;
  /** Reconnections in a row without a new event before giving up (default 5). */
  maxRetries?: number;
  /** Backoff before the n-th reconnection in a row: `retryDelayMs * n` (default 250). */
  retryDelayMs?: number;
  /** Called before each reconnection with the seq it resumes after. */
  onReconnect?: (lastEventId: number) => void;
};

export type StreamItem = { kind: "event"; event: LogEvent } | { kind: "delta"; delta: LiveDeltaFrame };

export type BdshClient = Client<paths> & {
  /** The session's durable events, resumed across dropped connections by `Last-Event-ID`. */
  events(sessionId: string, options?: StreamOptions): AsyncGenerator<LogEvent>;
  /** The same stream with live deltas interleaved (`deltas: true`). */
  stream(sessionId: string, options?: StreamOptions): AsyncGenerator<StreamItem>;
};

export function createBdshClient(options: BdshClientOptions): BdshClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const authorization = `Bearer ${options.token}`;
  const doFetch = options.fetch ?? fetch;
  const client = createClient<paths>({ baseUrl, headers: { authorization }, fetch: doFetch });
  const stream = (sessionId: string, streamOptions: StreamOptions = {}) =>
    streamEvents(doFetch, `${baseUrl}/v1/sessions/${encodeURIComponent(sessionId)}/events`, authorization, {
      ...streamOptions,
    });
  return Object.assign(client, {
    stream,
    async *events(sessionId: string, streamOptions: StreamOptions = {}): AsyncGenerator<LogEvent> {
      for await (const item of stream(sessionId, { ...streamOptions, deltas: false }))
        if (item.kind === "event") yield item.event;
    },
  });
}

async function* streamEvents(
  doFetch: typeof fetch,
  url: string,
  authorization: string,
  options: StreamOptions,
): AsyncGenerator<StreamItem> {
  let last = options.after ?? 0;
  let failures = 0;
  const maxRetries = options.maxRetries ?? 5;
  const retryDelayMs = options.retryDelayMs ?? 250;
  for (;;) {
    if (options.signal?.aborted) return;
    let progressed = false;
    try {
      const response = await doFetch(`${url}?deltas=${options.deltas === true}`, {
        headers: { authorization, accept: "text/event-stream", "last-event-id": String(last) },
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (!response.ok || !response.body) {
        const text = await response.text().catch(() => "");
        // A refusal (unknown session, wrong token) will not change by retrying.
        if (response.status >= 400 && response.status < 500) throw new BdshStreamError(response.status, text);
        throw new Error(`event stream: HTTP ${response.status}`);
      }
      const frames = response.body
        .pipeThrough(new TextDecoderStream())
        .pipeThrough(new EventSourceParserStream());
      for await (const frame of frames) {
        if (frame.event === "delta") {
          if (options.deltas) yield { kind: "delta", delta: JSON.parse(frame.data) as LiveDeltaFrame };
          continue;
        }
        const event = JSON.parse(frame.data) as LogEvent;
        if (event.seq <= last) continue;
        last = event.seq;
        progressed = true;
        failures = 0;
        yield { kind: "event", event };
      }
    } catch (error) {
      if (error instanceof BdshStreamError || options.signal?.aborted) throw error;
    }
    if (!progressed) failures++;
    if (failures > maxRetries) throw new Error(`event stream: no progress after ${maxRetries} reconnections`);
    options.onReconnect?.(last);
    await delay(retryDelayMs * Math.max(1, failures), options.signal);
  }
}

/** The server refused the stream (4xx): its `{error: {code, message}}` body is kept. */
export class BdshStreamError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`event stream refused: HTTP ${status} ${body.slice(0, 200)}`);
    this.name = "BdshStreamError";
  }
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
