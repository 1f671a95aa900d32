/**
 * `bdsh doctor --online`: one cheap authenticated request that says whether the key
 * works, before a real run finds out.
 *
 * Invariants:
 * - The request is a GET of the model list: `{base}/models` on the OpenAI format, `{base}/v1/models` on
 *   Anthropic Messages; it costs no tokens. It carries the same auth headers as a real request (the codec's),
 *   follows no redirect (M1: the key is never re-sent elsewhere) and gives up after `timeoutMs`.
 * - The result names the URL with its credentials redacted; no text in it ever contains the key (the
 *   provider's message, which may echo it, passes through the redactor first).
 * - 401/403 is `auth`; a network failure or the timeout is `unreachable`; any other non-2xx is `http`
 *   (the endpoint has no model list, or is the wrong one), which does not prove the key either way.
 */
import { Redactor } from "../log/redact.js";
import { CODECS } from "./adapter.js";
import { authHeaders, type Route, resolveApiKey } from "./catalog.js";
import { displayBaseUrl, hideUrlSecrets, httpError, transportError } from "./errors.js";
import type { FetchLike } from "./transport.js";

export const KEY_CHECK_TIMEOUT_MS = 10_000;

export type KeyCheck =
  | { outcome: "ok"; url: string; status: number }
  | { outcome: "no-key"; keyEnvs: readonly string[] }
  | { outcome: "auth"; url: string; status: number; message: string }
  | { outcome: "http"; url: string; status: number; message: string }
  | { outcome: "unreachable"; url: string; message: string };

/** The model-list URL of a route, as requested (not redacted). */
export function modelListUrl(route: Route): string {
  return route.preset.wire === "openai-chat" ? `${route.baseUrl}/models` : `${route.baseUrl}/v1/models`;
}

export async function checkKey(
  route: Route,
  options: {
    env?: Readonly<Record<string, string | undefined>>;
    timeoutMs?: number;
    fetch?: FetchLike;
  } = {},
): Promise<KeyCheck> {
  const key = resolveApiKey(route, options.env);
  if (key === undefined && route.preset.keyRequired) return { outcome: "no-key", keyEnvs: route.keyEnvs };
  const scrub = key === undefined ? Redactor.none : Redactor.none.with([key]);
  const target = modelListUrl(route);
  const url = displayBaseUrl(target);
  const timeoutMs = options.timeoutMs ?? KEY_CHECK_TIMEOUT_MS;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(target, {
      method: "GET",
      headers: {
        accept: "application/json",
        ...CODECS[route.preset.wire].protocolHeaders,
        ...authHeaders(route.preset, key),
      },
      redirect: "error",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    const message = timedOut ? `no answer within ${timeoutMs} ms` : transportError(error).message;
    return { outcome: "unreachable", url, message: scrub.text(hideUrlSecrets(message, route.baseUrl)) };
  }
  let body = "";
  try {
    body = await response.text();
  } catch {
    // the status is what counts
  }
  if (response.ok) return { outcome: "ok", url, status: response.status };
  const message = scrub.text(
    hideUrlSecrets(httpError(response.status, body, response.headers).message, route.baseUrl),
  );
  return response.status === 401 || response.status === 403
    ? { outcome: "auth", url, status: response.status, message }
    : { outcome: "http", url, status: response.status, message };
}
