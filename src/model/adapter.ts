/**
 * The one adapter: a route from the catalog plus the codec of its wire format.
 *
 * Invariants:
 * - Before any HTTP call: the effort is validated (M4), the history passes the pairing check (M8), and a
 *   route that needs a key has one. Each failure is an `LlmError` and nothing is sent.
 * - The key is read from the environment on every request (M25) and placed only in the auth header;
 *   caller headers cannot set or override credentials.
 * - The adapter never retries (M18: single attempt); `RetryPolicy` in ./retry.ts wraps it.
 * - A reply's tool-call ids are made unique against the request's history (./assembler.ts).
 * - `prepare` runs those checks and makes the body ahead, sending nothing; `stream` of that request object
 *   takes them over (or meets the same failure, from its iterator).
 * - A transport error (refused, DNS, TLS) or a not-found (404, a 400 "model not found")
 *   names the preset, the base URL (credentials redacted) and the model id sent, and what to check.
 * - An `LlmError` leaves with its message redacted (the key used and every value the
 *   redactor knows), so a 401 body that echoes the key is never printed, stored or retried with.
 */
import type { EventSourceMessage } from "eventsource-parser";
import { type CallIds, PairingChecker } from "../log/pairing.js";
import { Redactor } from "../log/redact.js";
import { anthropicParts } from "./anthropic/parse.js";
import { anthropicBody } from "./anthropic/serialize.js";
import { type BodyParts, bodyJson } from "./body-json.js";
import { authHeaders, endpointUrl, type Route, resolveApiKey, type WireFormat } from "./catalog.js";
import { assertEffort } from "./effort.js";
import { withEndpointContext } from "./errors.js";
import { openAiChatParts } from "./openai-chat/parse.js";
import { openAiChatBody, openAiHistory } from "./openai-chat/serialize.js";
import { type FetchLike, postSse } from "./transport.js";
import { LlmError, type ModelAdapter, type ModelPart, type ModelRequest } from "./types.js";

type Codec = {
  /** A body maker for one adapter (it may keep per-session caches, as the OpenAI history's JSON). */
  bodyMaker(): (route: Route, request: ModelRequest) => BodyParts;
  /** Headers the wire protocol needs on every request (the key's header is the preset's: `authHeaders`). */
  protocolHeaders: Readonly<Record<string, string>>;
  parse(frames: AsyncIterable<EventSourceMessage[]>, usedCallIds: () => CallIds): AsyncGenerator<ModelPart>;
};

export const CODECS: Readonly<Record<WireFormat, Codec>> = {
  "openai-chat": {
    bodyMaker: () => {
      const history = openAiHistory();
      return (route, request) => openAiChatBody(route, request, history);
    },
    protocolHeaders: {},
    parse: openAiChatParts,
  },
  "anthropic-messages": {
    bodyMaker: () => anthropicBody,
    protocolHeaders: { "anthropic-version": "2023-06-01" }, // M1
    parse: anthropicParts,
  },
};

const CREDENTIAL_HEADERS = new Set(["authorization", "x-api-key", "proxy-authorization", "cookie"]);

export type AdapterOptions = {
  /** Replaces global fetch: used by the recorder and the replay provider. */
  fetch?: FetchLike;
  /** Where keys are read from; defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Known secret values, redacted from error messages (the key in use always is). */
  redactor?: Redactor;
};

export function createAdapter(route: Route, options: AdapterOptions = {}): ModelAdapter {
  // M8 on every request; a session's history only grows between requests, so each check scans the news.
  const pairing = new PairingChecker();
  const body = CODECS[route.preset.wire].bodyMaker();
  const base = options.redactor ?? Redactor.none;
  let scrub: { key: string | undefined; redactor: Redactor } = { key: undefined, redactor: base };
  const redactorFor = (key: string | undefined): Redactor => {
    if (key !== scrub.key) scrub = { key, redactor: key === undefined ? base : base.with([key]) };
    return scrub.redactor;
  };
  const prepare = (request: ModelRequest): Prepared => prepareRequest(route, request, options, pairing, body);
  // `prepare`'s work, by request object, taken by that request's `stream` (a retry is a new request).
  const ahead = new WeakMap<ModelRequest, Prepared>();
  return {
    provider: route.preset.name,
    prepare: (request) => {
      try {
        ahead.set(request, prepare(request));
      } catch {
        // Not kept: `stream` prepares again and fails from its iterator, as the contract says.
      }
    },
    stream: (request) =>
      streamReply(
        route,
        request,
        options,
        () => {
          const done = ahead.get(request);
          ahead.delete(request);
          return done ?? prepare(request);
        },
        () => redactorFor(resolveApiKey(route, options.env)),
      ),
  };
}

function redacted(error: LlmError, redactor: () => Redactor): LlmError {
  const message = redactor().text(error.message);
  if (message === error.message) return error;
  return new LlmError(error.code, message, {
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.status === undefined ? {} : { status: error.status }),
    partial: error.partial,
  });
}

/** What a request needs before it goes on the wire: checked (M4, M8, the key), its body and headers made. */
type Prepared = { body: string; headers: Record<string, string>; used: CallIds };

function prepareRequest(
  route: Route,
  request: ModelRequest,
  options: AdapterOptions,
  checker: PairingChecker,
  makeBody: (route: Route, request: ModelRequest) => BodyParts,
): Prepared {
  assertEffort(request.effort);
  const pairing = checker.check(request.messages);
  if (pairing) throw new LlmError("INVALID_REQUEST", pairing.message);
  const key = resolveApiKey(route, options.env);
  if (key === undefined && route.preset.keyRequired) {
    throw new LlmError("AUTH", `no API key: set ${route.keyEnvs.join(" or ")}`);
  }
  const body = bodyJson(makeBody(route, request));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (!CREDENTIAL_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  Object.assign(headers, {
    "content-type": "application/json",
    accept: "text/event-stream",
    ...CODECS[route.preset.wire].protocolHeaders,
    ...authHeaders(route.preset, key),
  });
  // The ids of this request's own history, as the pairing check just collected them.
  return { body, headers, used: checker.callIds() };
}

/**
 * One request's parts. Its failures are made fit to show here, in the one generator (each layer of
 * `yield*` would cost every part a hop of its own): transport and not-found errors name the preset, base
 * URL and model id sent, then every message is redacted.
 */
async function* streamReply(
  route: Route,
  request: ModelRequest,
  options: AdapterOptions,
  prepared: () => Prepared,
  redactor: () => Redactor,
): AsyncGenerator<ModelPart> {
  try {
    const { body, headers, used } = prepared();
    const frames = postSse({
      url: endpointUrl(route),
      headers,
      body,
      idleTimeoutMs: route.idleTimeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    yield* CODECS[route.preset.wire].parse(frames, () => used);
  } catch (error) {
    if (!(error instanceof LlmError)) throw error;
    throw redacted(
      withEndpointContext(error, {
        provider: route.preset.name,
        baseUrl: route.baseUrl,
        baseUrlEnv: route.preset.baseUrlEnv,
        model: request.model,
      }),
      redactor,
    );
  }
}
