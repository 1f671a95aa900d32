/**
 * A local server speaking one web search provider's wire format (T19 acceptance): it records each request
 * (method, path, query, headers, body), checks the provider's auth header, and answers with the recorded
 * example in fixtures/web-search/. The only fake in the web_search tests; nothing reaches the internet.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { WebSearchProviderName } from "../../src/tools/web/search/providers.js";

export const SEARCH_KEY = "search-key-test-6b1f0e9d2c";

export type SeenRequest = {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  body: string;
};

export type SearchServer = {
  readonly url: string;
  readonly requests: SeenRequest[];
  /** Answer with this status and body instead of the fixture. */
  refuse?: { status: number; body: string } | undefined;
  /** Hold every answer until this many requests are open at once (proves the queries run in parallel). */
  holdUntilConcurrent?: number | undefined;
  /** Never answer (a stalled provider). */
  stall?: boolean | undefined;
  close(): Promise<void>;
};

export function fixture(name: WebSearchProviderName): string {
  return readFileSync(new URL(`./fixtures/web-search/${name}.json`, import.meta.url), "utf8");
}

/** Whether the request carries the key the way `name` takes it. */
function authorized(name: WebSearchProviderName, headers: IncomingMessage["headers"]): boolean {
  if (name === "brave") return headers["x-subscription-token"] === SEARCH_KEY;
  return headers.authorization === `Bearer ${SEARCH_KEY}`;
}

const PATHS: Record<WebSearchProviderName, string> = {
  brave: "/res/v1/web/search",
  tavily: "/search",
  searxng: "/search",
};

export async function startSearchServer(
  name: WebSearchProviderName,
  options: { requireKey?: boolean } = {},
): Promise<SearchServer> {
  const requests: SeenRequest[] = [];
  const held: (() => void)[] = [];
  const state: SearchServer = {
    url: "",
    requests,
    close: async () => {
      for (const release of held.splice(0)) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://localhost");
      requests.push({
        method: req.method ?? "",
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      if (state.stall) return;
      const answer = () => {
        if (state.refuse) {
          res.writeHead(state.refuse.status, { "content-type": "application/json" });
          res.end(state.refuse.body);
        } else if (url.pathname !== PATHS[name]) {
          res.writeHead(404).end("not found");
        } else if ((options.requireKey ?? true) && !authorized(name, req.headers)) {
          res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
        } else {
          res.writeHead(200, { "content-type": "application/json" }).end(fixture(name));
        }
      };
      const want = state.holdUntilConcurrent;
      if (want === undefined) return answer();
      held.push(answer);
      if (held.length >= want) for (const release of held.splice(0)) release();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  (state as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
