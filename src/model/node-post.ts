/**
 * The default client under `postSse` (./transport.ts): one POST over `node:http` / `node:https` with a
 * keep-alive agent per protocol, the body read through 'data' events. It replaced the global fetch, whose
 * undici, WHATWG streams and AbortSignal glue cost about twice the CPU per request of this path: a tenth
 * of a server's samples when it drives a thousand sessions.
 *
 * Invariants:
 * - The URL is requested exactly as given: its path and query (`/v1`, `?api-version=`) are the request
 *   target. A URL with a user name or password is refused, as fetch refuses it: never sent as Basic auth.
 * - Redirects are not followed (M1), and are failures as they were with fetch's `redirect: "error"`: a
 *   key is never re-sent to a host it was not meant for, and nothing is sent to the `Location`.
 * - TLS is verified with Node's defaults (its CA store plus `NODE_EXTRA_CA_CERTS`), as fetch does.
 * - A socket goes back to the pool only once its response has been read to its end. `cancel()` (an abort,
 *   the consumer stopping early, an error body read only in part) destroys it, so a half-read socket is
 *   never reused, and ends a pending read at once (L7).
 * - The body is UTF-8 decoded across chunk boundaries (a `StringDecoder`, through `setEncoding`), and a
 *   leading byte order mark is dropped as `TextDecoder` drops it.
 * - No compression is asked for (`accept-encoding: identity`: an SSE chunk is too small to gain much, and
 *   inflating costs CPU); a body compressed anyway, by a proxy, is inflated.
 */
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { HeaderLookup } from "./errors.js";
import type { Exchange, Reply, SseRequest, TextSource } from "./transport.js";

/**
 * How long an idle pooled socket is kept: undici's default (what fetch kept them for), unless the server's
 * `Keep-Alive: timeout=` hint is shorter (Node's agent then closes it a second before the server would).
 * A server that closed an idle socket just as it was reused would cost a failed attempt.
 */
const IDLE_SOCKET_MS = 4_000;

// One pool per protocol for the whole process: every session's requests to a provider share connections.
// No socket cap (Node's default, Infinity): a cap would queue requests behind other sessions' streams.
const httpAgent = new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
const httpsAgent = new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS });

/** The statuses fetch treats as redirects (the others of 3xx are answers, classified like any non-2xx). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Statuses whose response has no body (fetch gives them a null body). */
const NO_BODY = new Set([204, 205, 304]);
/** Past this much unread text the response is paused until the consumer reads. */
const HIGH_WATER_CHARS = 64 * 1024;

/** What `cancel()` rejects a pending read with; the caller reports its own reason (ABORTED, TIMEOUT). */
const CANCELLED = new Error("the request was cancelled");

/** Sends `request` (a POST of its JSON body) and reads the response as text. */
export function postOverNodeHttp(request: SseRequest): Exchange {
  const target = requestTarget(request.url);
  if (target instanceof Error) return { reply: Promise.reject(target), cancel: () => {} };
  return new NodePost(request, target);
}

type Target = { secure: boolean; hostname: string; port: number | undefined; path: string };

function requestTarget(raw: string): Target | Error {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return new Error(`only http and https URLs can be requested, not ${url.protocol}`);
  }
  if (url.username !== "" || url.password !== "") {
    return new Error("a URL that includes credentials (user:password@) cannot be requested");
  }
  return {
    secure: url.protocol === "https:",
    // `[::1]` in a URL, `::1` for the socket (Node puts the brackets back in the Host header).
    hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port === "" ? undefined : Number(url.port),
    // The fragment is never sent, as with fetch.
    path: `${url.pathname}${url.search}`,
  };
}

/** One request and its response: the `Exchange` and, once a reply has a body, its `TextSource`. */
class NodePost implements Exchange, TextSource {
  readonly reply: Promise<Reply>;
  private resolveReply!: (reply: Reply) => void;
  private rejectReply!: (error: unknown) => void;
  private readonly request: ClientRequest;
  private response: IncomingMessage | undefined;
  /** The response, or the stream that inflates it. */
  private body: Readable | undefined;
  /** Text received and not yet read. */
  private unread = "";
  private ended = false;
  private failed = false;
  private error: unknown;
  private waiting:
    | { resolve: (text: string | undefined) => void; reject: (error: unknown) => void }
    | undefined;
  private paused = false;
  private first = true;

  constructor(sse: SseRequest, target: Target) {
    this.reply = new Promise<Reply>((resolve, reject) => {
      this.resolveReply = resolve;
      this.rejectReply = reject;
    });
    this.request = (target.secure ? httpsRequest : httpRequest)(
      {
        method: "POST",
        hostname: target.hostname,
        port: target.port,
        path: target.path,
        // Names as the caller wrote them; Node matches them without case, so the caller's win. The
        // user agent is what fetch sent.
        headers: {
          "user-agent": "node",
          "accept-encoding": "identity",
          ...sse.headers,
          "content-length": Buffer.byteLength(sse.body),
        },
        agent: target.secure ? httpsAgent : httpAgent,
      },
      (response) => this.onResponse(response),
    );
    // Refused, reset, TLS, DNS: before the response or during its body (the body's own error comes too).
    this.request.on("error", (error) => this.fail(error));
    this.request.end(sse.body);
  }

  next(): Promise<string | undefined> {
    // Text that came before an error is read before the error, as fetch's reader gives it.
    if (this.unread !== "") {
      const text = this.unread;
      this.unread = "";
      if (this.paused) {
        this.paused = false;
        this.body?.resume();
      }
      return Promise.resolve(text);
    }
    if (this.failed) return Promise.reject(this.error);
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  cancel(): void {
    if (this.ended) return;
    // Read nothing more: an abort loses no race to text already received.
    this.unread = "";
    const complete = this.response?.complete === true;
    this.fail(CANCELLED, complete);
    // A response already received whole is drained instead: its socket is clean and goes back to the pool.
    if (complete) this.body?.resume();
  }

  private onResponse(response: IncomingMessage): void {
    this.response = response;
    response.on("error", (error) => this.fail(error));
    if (this.failed) {
      response.destroy();
      return;
    }
    const status = response.statusCode ?? 0;
    if (REDIRECTS.has(status) && response.headers.location !== undefined) {
      this.fail(new Error(`unexpected redirect: the server answered ${status}${redirectTarget(response)}`));
      return;
    }
    let body: Readable | undefined;
    if (NO_BODY.has(status)) response.resume();
    else {
      body = inflated(response);
      this.body = body;
      if (body !== response) body.on("error", (error) => this.fail(error));
      body.setEncoding("utf8");
      body.on("data", (text: string) => this.onText(text));
      body.on("end", () => this.onEnd());
      // A close without an end or an error (Node reports a cut connection as an error first).
      body.on("close", () => {
        if (!this.ended) this.fail(new Error("the connection closed before the response ended"));
      });
    }
    this.resolveReply({ status, headers: headerLookup(response), body: body ? this : undefined });
  }

  private onText(text: string): void {
    if (this.first) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting.resolve(text);
      return;
    }
    // Chunks that arrive between two reads are joined: one parse and one batch for them all.
    this.unread += text;
    if (this.unread.length > HIGH_WATER_CHARS && !this.paused) {
      this.paused = true;
      this.body?.pause();
    }
  }

  private onEnd(): void {
    if (this.failed) return;
    this.ended = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve(undefined);
  }

  /** The first error wins; a pending read ends with it; the socket is destroyed unless `keepSocket`. */
  private fail(error: unknown, keepSocket = false): void {
    if (this.failed || this.ended) return;
    this.failed = true;
    this.error = error;
    this.rejectReply(error);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(error);
    if (keepSocket) return;
    this.request.destroy();
    this.response?.destroy();
    if (this.body !== this.response) this.body?.destroy();
  }
}

/** Where a redirect pointed, as an origin only: enough to see `http` → `https`, no path or query. */
function redirectTarget(response: IncomingMessage): string {
  try {
    return ` to ${new URL(response.headers.location ?? "").origin}`;
  } catch {
    return "";
  }
}

/** The response, or a stream inflating it when a proxy compressed it although identity was asked for. */
function inflated(response: IncomingMessage): Readable {
  const coding = response.headers["content-encoding"]?.trim().toLowerCase();
  const inflate =
    coding === "gzip" || coding === "x-gzip"
      ? createGunzip()
      : coding === "deflate"
        ? createInflate()
        : coding === "br"
          ? createBrotliDecompress()
          : undefined;
  return inflate ? response.pipe(inflate) : response;
}

function headerLookup(response: IncomingMessage): HeaderLookup {
  return {
    get(name) {
      const value = response.headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(", ") : value;
    },
  };
}
