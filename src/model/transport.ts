/**
 * One streaming POST: send a JSON body, check the status, and read Server-Sent Events until the server
 * closes the stream. Shared by both wire formats.
 *
 * Two clients send it: `node:http` by default (./node-post.ts, the cheaper one per request), or
 * a fetch the caller passes (the recorder, the replay provider, tests). Each yields an `Exchange`: a
 * status, headers and a source of text chunks, with one `cancel()`. Everything after that (the status
 * check, the not-a-stream check, SSE framing, batching, the watchdog and the abort) is one code path here.
 *
 * Invariants:
 * - M19: an idle watchdog, reset by every chunk received (events, comments, pings), raises `TIMEOUT`;
 *   there is no total deadline. The caller's signal is combined with the watchdog's: caller abort is
 *   `ABORTED`, never `TIMEOUT`.
 * - SSE framing is done by `eventsource-parser` (item 4); this file only moves text.
 * - Non-2xx responses are classified by M17 (`httpError`) from at most `ERROR_BODY_CHARS` of their body;
 *   send and socket failures are `TRANSPORT`.
 * - When the consumer stops early the exchange is cancelled, so no socket is left open or half read.
 * - L7: an abort (caller or watchdog) ends the read at once. Node's fetch does not always error a body
 *   that is already flowing when its signal aborts (Ctrl-C printed "cancelling" and the text streamed to
 *   the end), so the abort cancels the exchange here, which ends a pending read, and every read checks it.
 * - Redirects are errors (M1): a key is never re-sent to a host it was not meant for.
 * - A 2xx reply that is not an event stream (an HTML page, a non-streaming JSON reply, an
 *   empty body) is `MALFORMED_RESPONSE` naming the content type received, not retried (the same request
 *   gets the same page). A body of another declared type that still parses as SSE is read as a stream; one
 *   that yields no event by its end (or within `NOT_A_STREAM_BYTES`) is the error. A JSON error object in
 *   such a body is classified like an in-stream error (M17), so an overflow sent that way still reaches C10.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { type HeaderLookup, httpError, notAStreamError, transportError } from "./errors.js";
import { postOverNodeHttp } from "./node-post.js";
import { LlmError } from "./types.js";

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export type SseRequest = {
  url: string;
  headers: Record<string, string>;
  body: string;
  idleTimeoutMs: number;
  signal?: AbortSignal;
  /** Sends the request through this fetch instead of `node:http`. */
  fetch?: FetchLike;
};

/** A response as the reading below needs it, whichever client received it. */
export type Reply = {
  status: number;
  headers: HeaderLookup;
  /** The body; undefined when the response has none (a 204). */
  body: TextSource | undefined;
};

/** A response body as UTF-8 text (decoded across chunk boundaries), pulled a chunk at a time. */
export type TextSource = {
  /** The text received since the last call, or undefined at the end of the body. */
  next(): Promise<string | undefined>;
};

/** One request in flight. `cancel()` ends it, from the send to the last byte: a pending read ends at once. */
export type Exchange = { readonly reply: Promise<Reply>; cancel(): void };

/** The SSE messages of one response, yielded in batches (one batch per chunk of text read). */
export async function* postSse(request: SseRequest): AsyncGenerator<EventSourceMessage[]> {
  if (request.signal?.aborted) throw abortedError();
  let cause: "idle" | "caller" | undefined;
  let exchange: Exchange | undefined;
  const stop = (why: "idle" | "caller"): void => {
    cause ??= why;
    exchange?.cancel();
  };
  const onCallerAbort = (): void => stop("caller");
  request.signal?.addEventListener("abort", onCallerAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  // One watchdog per request, restarted by every chunk (`refresh` reuses the timer).
  const arm = (): void => {
    if (timer) timer.refresh();
    else timer = setTimeout(() => stop("idle"), request.idleTimeoutMs);
  };
  const failure = (error: unknown): LlmError => {
    if (error instanceof LlmError) return error;
    if (cause === "caller") return abortedError();
    if (cause === "idle") {
      return new LlmError("TIMEOUT", `no data from the provider for ${request.idleTimeoutMs} ms`);
    }
    return transportError(error);
  };

  let finished = false;
  try {
    arm();
    exchange = request.fetch ? postOverFetch(request.fetch, request) : postOverNodeHttp(request);
    let reply: Reply;
    try {
      reply = await exchange.reply;
    } catch (error) {
      throw failure(error);
    }
    if (cause !== undefined) throw failure(undefined);
    if (reply.status < 200 || reply.status > 299) {
      let text: string;
      try {
        text = await readText(reply.body, arm);
      } catch (error) {
        throw failure(error);
      }
      if (cause !== undefined) throw failure(undefined);
      throw httpError(reply.status, text, reply.headers);
    }
    const contentType = reply.headers.get("content-type") ?? "";
    // A 2xx without a body (204) can no more be a stream than an empty one.
    if (!reply.body) throw notAStreamError(reply.status, contentType, "", false);

    const declaredStream = mediaType(contentType) === "text/event-stream";
    let events = 0;
    let head = "";
    let bytes = 0;
    let batch: EventSourceMessage[] = [];
    const parser = createParser({
      onEvent: (message) => {
        events++;
        batch.push(message);
      },
    });
    const body = reply.body;
    for (;;) {
      let text: string | undefined;
      try {
        text = await body.next();
      } catch (error) {
        throw failure(error);
      }
      // Checked after the read too: a chunk that was already queued when the abort came loses to it.
      if (cause !== undefined) throw failure(undefined);
      if (text === undefined) break;
      arm();
      if (declaredStream || events > 0) {
        parser.feed(text);
      } else {
        // Until a body of another type yields an event, keep its head for the error and count its size.
        bytes += Buffer.byteLength(text);
        if (head.length < HEAD_CHARS) head = (head + text).slice(0, HEAD_CHARS);
        parser.feed(text);
        if (events === 0 && bytes > NOT_A_STREAM_BYTES) {
          throw notAStreamError(reply.status, contentType, head, true);
        }
      }
      if (batch.length > 0) {
        const ready = batch;
        batch = [];
        yield ready;
      }
    }
    finished = true;
    if (!declaredStream && events === 0) throw notAStreamError(reply.status, contentType, head, false);
  } finally {
    if (timer) clearTimeout(timer);
    request.signal?.removeEventListener("abort", onCallerAbort);
    if (!finished) exchange?.cancel();
  }
}

/** How much of a non-2xx body is read for its error: enough for any provider's error object. */
const ERROR_BODY_CHARS = 64 * 1024;

/** The start of an error body (up to `ERROR_BODY_CHARS`), each chunk restarting the watchdog. */
async function readText(body: TextSource | undefined, onChunk: () => void): Promise<string> {
  let text = "";
  if (!body) return text;
  for (;;) {
    const chunk = await body.next();
    if (chunk === undefined) return text;
    onChunk();
    text += chunk;
    if (text.length >= ERROR_BODY_CHARS) return text.slice(0, ERROR_BODY_CHARS);
  }
}

/**
 * The request through a caller's fetch: the body's bytes decoded as UTF-8 across chunks. `cancel()` aborts
 * fetch's signal and cancels the body's reader itself (fetch does not always end a flowing body, L7).
 */
function postOverFetch(fetchLike: FetchLike, request: SseRequest): Exchange {
  const controller = new AbortController();
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const cancel = (): void => {
    controller.abort();
    reader?.cancel().catch(() => {});
  };
  const sent = untilAbort(
    fetchLike(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      signal: controller.signal,
      redirect: "error",
    }),
    controller.signal,
  );
  const reply = sent.then((response): Reply => {
    if (!response.body) return { status: response.status, headers: response.headers, body: undefined };
    const open = response.body.getReader();
    reader = open;
    const decoder = new TextDecoder();
    let done = false;
    const next = async (): Promise<string | undefined> => {
      if (done) return undefined;
      const chunk = await open.read();
      if (!chunk.done) return decoder.decode(chunk.value, { stream: true });
      done = true;
      // An incomplete character at the very end becomes U+FFFD, as `text()` would give it.
      const rest = decoder.decode();
      return rest === "" ? undefined : rest;
    };
    return { status: response.status, headers: response.headers, body: { next } };
  });
  return { reply, cancel };
}

/** What of a non-stream body is kept for the error message. */
const HEAD_CHARS = 2_000;
/** A body of another content type that has not produced one SSE event by this many bytes is not a stream. */
const NOT_A_STREAM_BYTES = 64 * 1024;

/** `text/event-stream; charset=utf-8` → `text/event-stream`. */
function mediaType(contentType: string): string {
  return (contentType.split(";")[0] ?? "").trim().toLowerCase();
}

/** `work`, unless `signal` aborts first; a response that arrives after the abort has its body cancelled. */
function untilAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  const discard = (value: T): void => {
    if (value instanceof Response) value.body?.cancel().catch(() => {});
  };
  if (signal.aborted) {
    work.then(discard, () => {});
    return Promise.reject(signal.reason);
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) {
          discard(value);
          reject(signal.reason);
        } else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

export function abortedError(): LlmError {
  return new LlmError("ABORTED", "the request was cancelled");
}
