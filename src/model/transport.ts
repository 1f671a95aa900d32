/**
 * One streaming POST: send a JSON body, check the status, and read Server-Sent Events until the server
 * closes the stream. Shared by both wire formats.
 *
 * Invariants:
 * - M19: an idle watchdog, reset by every byte received (events, comments, pings), raises `TIMEOUT`;
 *   there is no total deadline. The caller's signal is combined with the watchdog's: caller abort is
 *   `ABORTED`, never `TIMEOUT`.
 * - SSE framing is done by `eventsource-parser` (item 4); this file only moves bytes.
 * - Non-2xx responses are classified by M17 (`httpError`); fetch and socket failures are `TRANSPORT`.
 * - When the consumer stops early the response body is cancelled, so no socket is left open.
 * - L7: an abort (caller or watchdog) ends the read at once. Node's fetch does not always error a body
 *   that is already flowing when its signal aborts (Ctrl-C printed "cancelling" and the text
 *   streamed to the end), so the abort cancels the body's reader here, not left to fetch, and every read
 *   checks it.
 * - Redirects are errors (M1): a key is never re-sent to a host it was not meant for.
 * - A 2xx reply that is not an event stream (an HTML page, a non-streaming JSON reply, an
 *   empty body) is `MALFORMED_RESPONSE` naming the content type received, not retried (the same request
 *   gets the same page). A body of another declared type that still parses as SSE is read as a stream; one
 *   that yields no event by its end (or within `NOT_A_STREAM_BYTES`) is the error. A JSON error object in
 *   such a body is classified like an in-stream error (M17), so an overflow sent that way still reaches C10.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { httpError, notAStreamError, transportError } from "./errors.js";
import { LlmError } from "./types.js";

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export type SseRequest = {
  url: string;
  headers: Record<string, string>;
  body: string;
  idleTimeoutMs: number;
  signal?: AbortSignal;
  fetch?: FetchLike;
};

/** The SSE messages of one response, yielded in batches (one batch per network chunk). */
export async function* postSse(request: SseRequest): AsyncGenerator<EventSourceMessage[]> {
  const controller = new AbortController();
  let cause: "idle" | "caller" | undefined;
  const onCallerAbort = (): void => {
    cause ??= "caller";
    controller.abort();
  };
  if (request.signal?.aborted) throw abortedError();
  request.signal?.addEventListener("abort", onCallerAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  // One watchdog per request, restarted by every chunk (`refresh` reuses the timer).
  const arm = (): void => {
    if (timer) timer.refresh();
    else
      timer = setTimeout(() => {
        cause ??= "idle";
        controller.abort();
      }, request.idleTimeoutMs);
  };
  const failure = (error: unknown): LlmError => {
    if (error instanceof LlmError) return error;
    if (cause === "caller") return abortedError();
    if (cause === "idle") {
      return new LlmError("TIMEOUT", `no data from the provider for ${request.idleTimeoutMs} ms`);
    }
    return transportError(error);
  };

  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let stopReading: (() => void) | undefined;
  let finished = false;
  try {
    arm();
    let response: Response;
    try {
      response = await untilAbort(
        (request.fetch ?? fetch)(request.url, {
          method: "POST",
          headers: request.headers,
          body: request.body,
          signal: controller.signal,
          redirect: "error",
        }),
        controller.signal,
      );
    } catch (error) {
      throw failure(error);
    }
    if (!response.ok) {
      let text = "";
      try {
        text = await response.text();
      } catch (error) {
        throw failure(error);
      }
      throw httpError(response.status, text, response.headers);
    }
    const contentType = response.headers.get("content-type") ?? "";
    // A 2xx without a body (204) can no more be a stream than an empty one.
    if (!response.body) throw notAStreamError(response.status, contentType, "", false);

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
    const decoder = new TextDecoder();
    const feed = (text: string): void => {
      if (!declaredStream && events === 0 && head.length < HEAD_CHARS)
        head = (head + text).slice(0, HEAD_CHARS);
      parser.feed(text);
    };
    const open = response.body.getReader();
    reader = open;
    // L7: an abort cancels the reader, which ends a pending read at once; one listener for the whole
    // body rather than one per read (a listener costs more than a small chunk's parsing).
    stopReading = () => {
      open.cancel().catch(() => {});
    };
    controller.signal.addEventListener("abort", stopReading, { once: true });
    if (controller.signal.aborted) throw failure(controller.signal.reason);
    for (;;) {
      let chunk: Awaited<ReturnType<typeof open.read>>;
      try {
        chunk = await open.read();
      } catch (error) {
        throw failure(error);
      }
      // Checked after the read too: a chunk that was already queued when the abort came loses to it.
      if (controller.signal.aborted) throw failure(controller.signal.reason);
      if (chunk.done) break;
      arm();
      bytes += chunk.value.byteLength;
      feed(decoder.decode(chunk.value, { stream: true }));
      if (!declaredStream && events === 0 && bytes > NOT_A_STREAM_BYTES) {
        throw notAStreamError(response.status, contentType, head, true);
      }
      if (batch.length > 0) {
        const ready = batch;
        batch = [];
        yield ready;
      }
    }
    finished = true;
    feed(decoder.decode());
    if (!declaredStream && events === 0) throw notAStreamError(response.status, contentType, head, false);
    if (batch.length > 0) yield batch;
  } finally {
    if (timer) clearTimeout(timer);
    request.signal?.removeEventListener("abort", onCallerAbort);
    if (stopReading) controller.signal.removeEventListener("abort", stopReading);
    if (reader && !finished) reader.cancel().catch(() => {});
  }
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
