/**
 * `GET /v1/sessions/:id/history`: the stored log in pages of JSON, gzip-compressed when the client accepts
 * it. A client opening a long session reads the history this way (a 10,000-event log is a few hundred KB
 * compressed against megabytes as a stream) and then follows the event stream from the last seq it got;
 * the stream's `Last-Event-ID` resume and its `event: live` attach are unchanged.
 *
 * Each event is the stream's `data:` text (`eventJson`), so both paths hand the client the same objects.
 */
import { promisify } from "node:util";
import { gzip as gzipCallback } from "node:zlib";
import type { Static } from "typebox";
import { eventJson } from "../log/serialize.js";
import type { Store } from "../store/store.js";
import type { RouteTable } from "./openapi.js";
import { errorResponses, HistoryPage, HistoryQuery, SessionId } from "./schemas.js";
import { requireSession } from "./session-routes.js";

const gzip = promisify(gzipCallback);

/** Below this size compressing costs more than it saves. */
const GZIP_MIN_BYTES = 1024;

export function registerHistoryRoutes(routes: RouteTable, context: { store: Store }): void {
  const { store } = context;
  routes.add(
    "GET",
    "/v1/sessions/:id/history",
    {
      summary: "A page of the stored events as JSON (gzip when accepted); follow /events after its last seq",
      params: SessionId,
      querystring: HistoryQuery,
      response: { 200: HistoryPage, ...errorResponses },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SessionId>;
      const query = request.query as Static<typeof HistoryQuery>;
      const limit = query.limit ?? 5_000;
      const row = await requireSession(store, id);
      const events = await store.read(id, { after: query.after ?? 0, limit: limit + 1 });
      const page = events.slice(0, limit);
      const text = `{"events":[${page.map(eventJson).join(",")}],"lastSeq":${Math.max(row.lastSeq, page.at(-1)?.seq ?? 0)},"more":${events.length > limit}}`;
      const body = Buffer.from(text, "utf8");
      void reply
        .header("content-type", "application/json; charset=utf-8")
        .header("cache-control", "no-store");
      void reply.header("vary", "accept-encoding");
      if (
        body.length >= GZIP_MIN_BYTES &&
        /\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""))
      ) {
        void reply.header("content-encoding", "gzip");
        return reply.send(await gzip(body, { level: 6 }));
      }
      return reply.send(body);
    },
  );
}
