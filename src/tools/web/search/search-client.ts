/**
 * One HTTP client for every provider in providers.ts: the `webSearch` service the `web_search` tool uses.
 *
 * Invariants:
 * - The key travels only in the header the provider names. Redirects are not followed, so it is never
 *   re-sent to another host; a redirect is an error.
 * - Every message built here passes a redactor holding the key (a provider may echo it in an error body);
 *   URLs are shown without their query string.
 * - A failure is a `WebSearchError` whose message says what happened and what the model can do next; the
 *   tool turns it into an `Error: …` result (T2).
 * - The answer is read up to MAX_ANSWER_BYTES; results are cut to the count asked for.
 */
import { Redactor } from "../../../log/redact.js";
import type { SearchResult, WebSearchProvider } from "../web-tools.js";
import type { SearchProviderSpec } from "./providers.js";

/** A search answer is small; anything past this is not one. */
export const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
const ERROR_BODY_CHARS = 300;

export class WebSearchError extends Error {
  constructor(
    readonly code: "AUTH" | "RATE_LIMIT" | "HTTP" | "NETWORK" | "MALFORMED" | "ABORTED",
    message: string,
  ) {
    super(message);
    this.name = "WebSearchError";
  }
}

export function searchClient(options: {
  spec: SearchProviderSpec;
  baseUrl: string;
  key?: string | undefined;
  fetch?: typeof fetch;
}): WebSearchProvider {
  const { spec, baseUrl, key } = options;
  const fetcher = options.fetch ?? fetch;
  const redactor = key ? Redactor.none.with([key]) : Redactor.none;
  const fail = (code: WebSearchError["code"], text: string) =>
    new WebSearchError(code, redactor.text(`${spec.label} ${text}`));
  return {
    async search(query, { maxResults, signal }): Promise<SearchResult[]> {
      const { url, init } = spec.request(baseUrl, query, maxResults, key);
      const shown = `${url.origin}${url.pathname}`;
      let response: Response;
      try {
        response = await fetcher(url, { ...init, redirect: "manual", signal });
      } catch (error) {
        if (signal.aborted) throw fail("ABORTED", "search was stopped");
        throw fail(
          "NETWORK",
          `could not be reached at ${shown} (${(error as Error).message}); retry once, then continue without web search`,
        );
      }
      const body = await readCapped(response, signal);
      if (response.status < 200 || response.status > 299) throw statusError(response.status, body, fail);
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw fail("MALFORMED", `answered with something that is not JSON; continue without web search`);
      }
      const results = spec.results(parsed);
      if (results === undefined)
        throw fail("MALFORMED", "answered in an unexpected shape; continue without web search");
      return results.slice(0, maxResults);
    },
  };
}

function statusError(
  status: number,
  body: string,
  fail: (code: WebSearchError["code"], text: string) => WebSearchError,
): WebSearchError {
  const quoted = body.trim() ? `: ${body.trim().slice(0, ERROR_BODY_CHARS)}` : "";
  if (status === 401 || status === 403)
    return fail(
      "AUTH",
      `refused the request (HTTP ${status})${quoted}. Web search is not usable in this session: continue without it and tell the user its key or access needs fixing`,
    );
  if (status === 429)
    return fail(
      "RATE_LIMIT",
      `is rate limiting (HTTP 429)${quoted}. Wait before searching again, use fewer queries, or continue without web search`,
    );
  if (status >= 300 && status < 400)
    return fail(
      "HTTP",
      `answered with a redirect (HTTP ${status}), which is not followed; continue without web search`,
    );
  return fail(
    "HTTP",
    `answered HTTP ${status}${quoted}. ${status >= 500 ? "Retry once, then continue without web search" : "Rephrase the query or continue without web search"}`,
  );
}

async function readCapped(response: Response, signal: AbortSignal): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (bytes > MAX_ANSWER_BYTES) {
        await reader.cancel().catch(() => undefined);
        throw new WebSearchError("MALFORMED", `the search answer is larger than ${MAX_ANSWER_BYTES} bytes`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof WebSearchError) throw error;
    if (signal.aborted) throw new WebSearchError("ABORTED", "search was stopped");
    throw new WebSearchError("NETWORK", `the search answer was cut off (${(error as Error).message})`);
  }
  return Buffer.concat(chunks).toString("utf8");
}
