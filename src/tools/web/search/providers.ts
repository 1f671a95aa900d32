/**
 * The web search providers (T19), as data: where each one is asked, how its key travels, and how its answer
 * is read. One HTTP path (./search-client.ts) serves them all, so a new provider is one row here.
 *
 * Wire formats, from each provider's documentation (fixtures recorded in test/tools/fixtures/web-search/):
 * - Brave Search: `GET <base>/res/v1/web/search?q=…&count=N`, key in `X-Subscription-Token`; results at
 *   `web.results[]` with `title`, `url`, `description` (which may carry `<strong>` highlighting).
 * - Tavily: `POST <base>/search` with `{"query", "max_results", "search_depth": "basic"}`, key as
 *   `Authorization: Bearer`; results at `results[]` with `title`, `url`, `content`.
 * - SearXNG (a self-hosted instance, its JSON format switched on): `GET <base>/search?q=…&format=json`, no
 *   key of its own (an optional one goes as `Authorization: Bearer`, for an instance behind a proxy that
 *   checks it); results at `results[]` with `title`, `url`, `content`. It takes no result count, so the
 *   list is cut here.
 */
import type { WEB_SEARCH_PROVIDERS } from "../../../config/schema.js";
import type { SearchResult } from "../web-tools.js";

export type WebSearchProviderName = (typeof WEB_SEARCH_PROVIDERS)[number];

export type SearchRequest = {
  url: URL;
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string };
};

export type SearchProviderSpec = {
  label: string;
  /** Where the key is looked up after `web_search.<name>.api_key`, in order. */
  keyEnvs: readonly string[];
  /** Without a key the provider cannot answer (SearXNG can). */
  keyRequired: boolean;
  /** The endpoint's origin (and path prefix); SearXNG has none, its instance is the user's. */
  defaultBaseUrl?: string;
  request(base: string, query: string, maxResults: number, key: string | undefined): SearchRequest;
  /** The results of a parsed JSON answer; undefined when the answer is not this provider's shape. */
  results(body: unknown): SearchResult[] | undefined;
};

/** A base URL and a path under it, whatever trailing slash the user wrote. */
function endpoint(base: string, path: string): URL {
  return new URL(`${base.replace(/\/+$/, "")}${path}`);
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

/** `items` read as results, each with a string url; the snippet from `snippetKey`. */
function listOf(items: unknown, snippetKey: string): SearchResult[] | undefined {
  if (!Array.isArray(items)) return undefined;
  const results: SearchResult[] = [];
  for (const item of items) {
    const entry = record(item);
    if (!entry || typeof entry.url !== "string") continue;
    results.push({
      title: typeof entry.title === "string" ? entry.title : entry.url,
      url: entry.url,
      snippet: typeof entry[snippetKey] === "string" ? (entry[snippetKey] as string) : "",
    });
  }
  return results;
}

export const SEARCH_PROVIDERS: Record<WebSearchProviderName, SearchProviderSpec> = {
  brave: {
    label: "Brave Search",
    keyEnvs: ["BRAVE_SEARCH_API_KEY", "BRAVE_API_KEY"],
    keyRequired: true,
    defaultBaseUrl: "https://api.search.brave.com",
    request(base, query, maxResults, key) {
      const url = endpoint(base, "/res/v1/web/search");
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(maxResults));
      return {
        url,
        init: { method: "GET", headers: { accept: "application/json", "x-subscription-token": key ?? "" } },
      };
    },
    results: (body) => {
      const web = record(record(body)?.web);
      // An answer with no web section (nothing found) is an empty list, not a malformed answer.
      if (record(body) && web === undefined) return [];
      return listOf(web?.results, "description");
    },
  },
  tavily: {
    label: "Tavily",
    keyEnvs: ["TAVILY_API_KEY"],
    keyRequired: true,
    defaultBaseUrl: "https://api.tavily.com",
    request(base, query, maxResults, key) {
      return {
        url: endpoint(base, "/search"),
        init: {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key ?? ""}` },
          body: JSON.stringify({ query, max_results: maxResults, search_depth: "basic" }),
        },
      };
    },
    results: (body) => listOf(record(body)?.results, "content"),
  },
  searxng: {
    label: "SearXNG",
    keyEnvs: ["SEARXNG_API_KEY"],
    keyRequired: false,
    request(base, query, _maxResults, key) {
      const url = endpoint(base, "/search");
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      const headers: Record<string, string> = { accept: "application/json" };
      if (key) headers.authorization = `Bearer ${key}`;
      return { url, init: { method: "GET", headers } };
    },
    results: (body) => listOf(record(body)?.results, "content"),
  },
};
