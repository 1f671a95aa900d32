/**
 * M17: turning provider failures into `LlmError` codes, the same way for both wire formats.
 *
 * Invariants:
 * - HTTP and in-band errors are classified in the seed's order: auth, quota, rate limit, context
 *   overflow, invalid request, server, then `HTTP_<status>`.
 * - Overflow is read from one table of real provider replies, each with its source (./overflow.ts); a
 *   body-size 413 counts only with Anthropic's `request_too_large`.
 * - `Retry-After` (seconds or an HTTP date) becomes `retryAfterMs`; a value that cannot be read is ignored.
 * - The provider's message is kept (trimmed to a bounded length) but never the request's credentials:
 *   nothing here sees them.
 */
import { OVERFLOW_RULES } from "./overflow.js";
import { LlmError, type LlmErrorCode } from "./types.js";

const MAX_MESSAGE_CHARS = 500;

const QUOTA_PATTERN = /quota|insufficient[_ ]balance|insufficient[_ ]credits|billing|payment required/i;
const AUTH_PATTERN = /authentication|unauthori[sz]ed|invalid[_ ]api[_ ]key|permission[_ ]denied/i;
const RATE_PATTERN = /rate[_ ]limit|too many requests/i;
const INVALID_PATTERN = /invalid[_ ]request/i;
const SERVER_PATTERN = /api_error|overloaded|internal server error|server_error/i;

/**
 * M17 `isContextWindowExceededError` over the one table of real provider messages (./overflow.ts). A rule
 * bound to a status (Anthropic's 413) holds only when that status is given.
 */
export function isContextOverflow(text: string, status?: number): boolean {
  return OVERFLOW_RULES.some(
    (rule) => (rule.status === undefined || rule.status === status) && rule.pattern.test(text),
  );
}

/** Seconds or an HTTP date, to milliseconds from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Pulls a readable message and type out of the usual `{error:{message,type,code}}` bodies. */
function describeBody(body: string): { message: string; kind: string } {
  try {
    const parsed: unknown = JSON.parse(body);
    // Ollama sends `{"error": "<message>"}`.
    if (isRecord(parsed) && typeof parsed.error === "string") return { message: parsed.error, kind: "" };
    const error = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : parsed;
    if (isRecord(error)) {
      const message = typeof error.message === "string" ? error.message : body;
      const kind = [error.type, error.code].filter((v) => typeof v === "string").join(" ");
      return { message, kind };
    }
  } catch {
    // not JSON: keep the text
  }
  return { message: body, kind: "" };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > MAX_MESSAGE_CHARS ? `${flat.slice(0, MAX_MESSAGE_CHARS)}…` : flat;
}

/** M17 ordering over status (0 for in-band errors) and the provider's wording. */
export function classify(status: number, text: string): LlmErrorCode {
  if (status === 401 || status === 403 || (status < 500 && AUTH_PATTERN.test(text))) return "AUTH";
  if (status === 402 || QUOTA_PATTERN.test(text)) return "QUOTA";
  if (status === 429 || RATE_PATTERN.test(text)) return "RATE_LIMIT";
  if (isContextOverflow(text, status)) return "CONTEXT_WINDOW_EXCEEDED";
  if (status === 400 || status === 413 || status === 422 || INVALID_PATTERN.test(text)) {
    return "INVALID_REQUEST";
  }
  if (status >= 500 || SERVER_PATTERN.test(text)) return "SERVER";
  if (status === 0) return "SERVER";
  return `HTTP_${status}`;
}

/** What `httpError` reads of a response's headers: fetch's `Headers`, or a lookup over node:http's. */
export type HeaderLookup = { get(name: string): string | null };

/** A non-2xx response, classified. */
export function httpError(status: number, body: string, headers: HeaderLookup): LlmError {
  const { message, kind } = describeBody(body);
  const code = classify(status, `${kind} ${message}`);
  const retryAfterMs = parseRetryAfter(headers.get("retry-after"));
  const text = clip(message) || `HTTP ${status}`;
  return new LlmError(code, `${status}: ${text}`, {
    status,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/** An error object sent inside the stream (`{"error":…}` chunk or Anthropic `event: error`). */
export function inBandError(payload: unknown): LlmError {
  const body = JSON.stringify(payload);
  const { message, kind } = describeBody(body);
  return new LlmError(classify(0, `${kind} ${message}`), `in-stream error: ${clip(message)}`);
}

/**
 * A 2xx reply whose body is not an event stream. `MALFORMED_RESPONSE` (not retried: the
 * same request gets the same page), naming the content type and the start of the body; a JSON error object
 * in it is classified like an in-stream error (M17), so an overflow sent this way still reaches C10.
 */
export function notAStreamError(
  status: number,
  contentType: string,
  head: string,
  truncated: boolean,
): LlmError {
  const type = contentType.trim() === "" ? "no content type" : contentType.trim();
  const what = `the provider answered ${status} with ${type}, not an event stream (text/event-stream)`;
  const text = head.trim();
  if (text === "") {
    return new LlmError("MALFORMED_RESPONSE", `${what}: the body was empty`, { status });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (isRecord(parsed) && parsed.error !== undefined && parsed.error !== null) {
    const { message, kind } = describeBody(text);
    return new LlmError(classify(0, `${kind} ${message}`), `${what}, carrying an error: ${clip(message)}`, {
      status,
    });
  }
  const hint =
    isRecord(parsed) || /^[{[]/.test(text)
      ? "a server or proxy that ignores stream: true"
      : /^<(!doctype|html|head|body)/i.test(text)
        ? "an HTML page: check that the base URL points at the API, not a web page or login portal"
        : "check the base URL and any proxy in between";
  const body = truncated ? `${clip(text)}…` : clip(text);
  return new LlmError("MALFORMED_RESPONSE", `${what} (${hint}): ${body}`, { status });
}

/** A failure to send the request or to read the body, after the watchdog and abort were ruled out. */
export function transportError(cause: unknown): LlmError {
  const reason = cause instanceof Error ? describeCause(cause) : String(cause);
  return new LlmError("TRANSPORT", `connection failed: ${clip(reason)}`, { cause });
}

function describeCause(error: Error): string {
  const inner = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${inner}`;
}

/**
 * The provider's 404 or 400 for a model it does not serve. Each alternative keeps the
 * real message it was taken from:
 * - OpenAI 404 `code: "model_not_found"`: "The model `gpt-9` does not exist or you do not have access to it."
 * - vLLM 404 `NotFoundError`: "The model `foo` does not exist."
 * - DeepSeek 400 `invalid_request_error`: "Model Not Exist"
 * - Anthropic 404 `not_found_error`: "model: claude-9"
 * - OpenRouter 400: "foo/bar is not a valid model ID"
 * - Together 404 `model_not_available`: "Unable to access model foo. Please visit … supported models."
 * - Ollama 404: `model "foo" not found, try pulling it first`
 */
const MODEL_NOT_FOUND_PATTERN =
  /model_not_found|model_not_available|not_found_error|model\b.{0,120}\b(does not exist|not exist|not found)|not a valid model|unable to access model/i;

/** Whether an HTTP failure says the model (or the path below the base URL) is unknown. */
export function isModelNotFound(status: number | undefined, message: string): boolean {
  if (status === 404) return true;
  return status === 400 && MODEL_NOT_FOUND_PATTERN.test(message);
}

/** Where a request went: what a user needs to find the setting that is wrong. */
export type EndpointContext = {
  provider: string;
  baseUrl: string;
  /** The preset's own base URL variable (`DEEPSEEK_BASE_URL`, …). */
  baseUrlEnv: string;
  model: string;
};

/**
 * A transport or not-found `LlmError` with the provider preset, the base URL (credentials redacted) and
 * the model id sent, and what to check; other errors unchanged. The code, status and partial are kept.
 */
export function withEndpointContext(error: LlmError, where: EndpointContext): LlmError {
  const notFound = error.code !== "TRANSPORT" && isModelNotFound(error.status, error.message);
  if (error.code !== "TRANSPORT" && !notFound) return error;
  const sent = `provider ${where.provider}, base URL ${displayBaseUrl(where.baseUrl)}, model ${where.model}`;
  const advice = notFound
    ? "check the model id (--model, BDSH_MODEL or model.id) and that this base URL serves it"
    : `check the base URL (--base-url, BDSH_BASE_URL, ${where.baseUrlEnv} or model.base_url) and that the server is reachable`;
  // Node's fetch quotes a URL with credentials in its error ("Request cannot be constructed from a URL
  // that includes credentials: http://user:pass@…"): those are hidden here, not only in `sent`.
  const message = hideUrlSecrets(error.message, where.baseUrl);
  return new LlmError(error.code, `${message} (${sent}): ${advice}`, {
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.status === undefined ? {} : { status: error.status }),
    partial: error.partial,
    ...(error.cause === undefined ? {} : { cause: error.cause }),
  });
}

const SECRET_PARAM = /key|token|secret|password|passwd|auth|sig/i;

/** The user name, password and secret-looking parameter values of a URL, as written and decoded. */
function urlSecrets(baseUrl: string): string[] {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return [baseUrl];
  }
  const values = [url.username, url.password];
  for (const [name, value] of url.searchParams) if (SECRET_PARAM.test(name)) values.push(value);
  const both = values.flatMap((value) => [value, safeDecode(value), encodeURIComponent(value)]);
  return [...new Set(both.filter((value) => value !== ""))].sort((a, b) => b.length - a.length);
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** `text` with every credential of `baseUrl` replaced by `***` (for messages that quote the URL). */
export function hideUrlSecrets(text: string, baseUrl: string): string {
  let out = text;
  for (const secret of urlSecrets(baseUrl)) out = out.split(secret).join("***");
  return out;
}

/**
 * A base URL safe to print: user name, password and secret-looking query parameters become `***` (as
 * store/redact-url.ts does for connection strings; model/ does not import store/). An unparsable URL is
 * not shown.
 */
export function displayBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return "(unparsable base URL, not shown)";
  }
  let changed = false;
  if (url.username) {
    url.username = "***";
    changed = true;
  }
  if (url.password) {
    url.password = "***";
    changed = true;
  }
  for (const name of [...url.searchParams.keys()]) {
    if (SECRET_PARAM.test(name)) {
      url.searchParams.set(name, "***");
      changed = true;
    }
  }
  if (!changed) return baseUrl;
  const text = url.toString();
  return !baseUrl.endsWith("/") && text.endsWith("/") && url.search === "" ? text.slice(0, -1) : text;
}
