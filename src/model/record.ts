/**
 * Record and replay (item 7): `--record FILE` keeps every raw provider response with the request
 * that produced it; the `replay` provider plays a recording back through the same parsers.
 *
 * File format: JSON Lines, one exchange per line, appended when its response body ends:
 *   {"v":1,"at":"…","provider":"deepseek","url":"…","request":{"headers":{…},"body":{…}},
 *    "status":200,"headers":{…},"body":"<raw SSE text>","complete":true}
 * A body that is not valid UTF-8 is stored as `bodyBase64` instead, so replay is byte for byte.
 *
 * Invariants:
 * - Credential headers are never written (INTERFACE: secrets never appear in any output or log), and their
 *   values, with every value the redactor knows, are redacted from the URL, the bodies and the response
 *   headers (a 401 body that echoes the key).
 * - Redaction changes what is written, never what the adapter sees.
 * - Recording does not change what the adapter sees: bytes pass through as they arrive.
 * - Replay serves exchanges in file order, one per request, regardless of the request's content; running
 *   out of exchanges is an `INVALID_REQUEST` error, not a network call.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { Redactor } from "../log/redact.js";
import { type AdapterOptions, createAdapter } from "./adapter.js";
import { isProviderName, type ProviderName, type Route, resolveRoute } from "./catalog.js";
import type { FetchLike } from "./transport.js";
import { LlmError, type ModelAdapter } from "./types.js";

export type RecordedExchange = {
  v: 1;
  at: string;
  provider: string;
  url: string;
  request: { headers: Record<string, string>; body: unknown };
  status: number;
  headers: Record<string, string>;
  body?: string;
  bodyBase64?: string;
  /** False when the connection failed before the body ended. */
  complete: boolean;
};

const SECRET_HEADERS = /^(authorization|x-api-key|proxy-authorization|cookie|x-dsh-auth-token)$/i;

/** Wraps a fetch so each response is appended to `file` when its body has been read. */
export function recordingFetch(
  file: string,
  provider: string,
  inner: FetchLike = fetch,
  redactor: Redactor = Redactor.none,
): FetchLike {
  return async (url, init) => {
    const response = await inner(url, init);
    const requestHeaders: Record<string, string> = {};
    const credentials: string[] = [];
    new Headers(init.headers).forEach((value, name) => {
      if (!SECRET_HEADERS.test(name)) requestHeaders[name] = value;
      else credentials.push(value, value.replace(/^\s*(bearer|basic)\s+/i, ""));
    });
    const scrub = credentials.length ? redactor.with(credentials) : redactor;
    const base = scrub.value({
      v: 1 as const,
      provider,
      url,
      request: { headers: requestHeaders, body: parseBody(init.body) },
      status: response.status,
      headers: Object.fromEntries(response.headers),
    });
    const chunks: Uint8Array[] = [];
    let written = false;
    const write = (complete: boolean): void => {
      if (written) return;
      written = true;
      appendFileSync(
        file,
        `${JSON.stringify({ ...base, at: new Date().toISOString(), ...encodeBody(chunks, scrub), complete })}\n`,
      );
    };
    if (!response.body) {
      write(true);
      return response;
    }
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const next = await reader.read();
          if (next.done) {
            write(true);
            controller.close();
            return;
          }
          chunks.push(next.value);
          controller.enqueue(next.value);
        } catch (error) {
          write(false);
          controller.error(error);
        }
      },
      cancel(reason) {
        // The parser stops at its end marker ([DONE], message_stop): what it read is the whole reply.
        write(true);
        return reader.cancel(reason);
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function parseBody(body: RequestInit["body"]): unknown {
  if (typeof body !== "string") return null;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

function encodeBody(chunks: Uint8Array[], redactor: Redactor): { body: string } | { bodyBase64: string } {
  const bytes = Buffer.concat(chunks);
  try {
    return { body: redactor.text(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) };
  } catch {
    return { bodyBase64: Buffer.from(redactor.bytes(bytes)).toString("base64") };
  }
}

export function readRecording(file: string): RecordedExchange[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as RecordedExchange);
}

/** A fetch that answers each call with the next recorded response, byte for byte. */
export function replayFetch(exchanges: readonly RecordedExchange[]): FetchLike {
  let next = 0;
  return async (_url, init) => {
    const exchange = exchanges[next];
    if (!exchange) {
      throw new LlmError("INVALID_REQUEST", `the recording has no response left (${next} played)`);
    }
    next++;
    const bytes =
      exchange.bodyBase64 !== undefined
        ? Buffer.from(exchange.bodyBase64, "base64")
        : Buffer.from(exchange.body ?? "", "utf8");
    const signal = init.signal;
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (signal?.aborted) controller.error(signal.reason);
        else if (!sent && bytes.length > 0) {
          sent = true;
          controller.enqueue(new Uint8Array(bytes));
        } else if (exchange.complete) controller.close();
        // A recording cut by a dropped connection replays as the same failure, after its bytes.
        else controller.error(new Error("recorded connection ended early"));
      },
    });
    return new Response(body, { status: exchange.status, headers: exchange.headers });
  };
}

/** An adapter that records each exchange of `route` to `file`. */
export function createRecordingAdapter(
  route: Route,
  file: string,
  options: AdapterOptions = {},
): ModelAdapter {
  return createAdapter(route, {
    ...options,
    fetch: recordingFetch(file, route.preset.name, options.fetch, options.redactor),
  });
}

/**
 * The `replay` provider: the wire format comes from the recording's provider, so the same parser runs.
 * No key and no network are needed.
 */
export function createReplayAdapter(
  exchanges: readonly RecordedExchange[],
  provider?: ProviderName,
): ModelAdapter {
  const name = provider ?? exchanges[0]?.provider ?? "openai-compatible";
  if (!isProviderName(name))
    throw new LlmError("INVALID_REQUEST", `the recording names an unknown provider "${name}"`);
  const route = resolveRoute({ provider: name, baseUrl: "http://replay.invalid" }, {});
  return createAdapter(route, { fetch: replayFetch(exchanges), env: { BDSH_API_KEY: "replay" } });
}
