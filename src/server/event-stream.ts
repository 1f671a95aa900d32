/**
 * `GET /v1/sessions/:id/events` as Server-Sent Events (INTERFACE.md "HTTP API").
 *
 * Invariants:
 * - One SSE event per durable event, in seq order, `id:` = seq and `data:` = `eventJson` (the `--json` form):
 *   a client that reconnects with `Last-Event-ID` (or `?after=`) gets exactly the events after it.
 * - Durable events come from `store.follow` (rows, woken by NOTIFY), so any server serves any session's
 *   stream, whichever server drives it.
 * - Ephemeral text/reasoning deltas are `event: delta` without an `id:` (never part of the resume cursor,
 *   never needed for correctness); only the server driving the session has them, from the agent it has
 *   open, looked up at connection and again at every `turn/start` and `step/start`.
 * - When it attaches to that agent mid-reply, the reply streamed so far comes first as one `event: live`
 *   (`{turn, step, text, reasoning}`), read in the same tick as the subscription, so a reload shows the
 *   whole partial reply and the deltas continue it without a gap or a repeat.
 * - A comment line every `keepAliveMs` keeps proxies from closing an idle stream. Closing the request
 *   ends the follow.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Static } from "typebox";
import { eventJson } from "../log/serialize.js";
import type { Agent } from "../loop/agent.js";
import type { Store } from "../store/store.js";
import { ApiError } from "./api-error.js";
import type { RouteTable } from "./openapi.js";
import { EventsQuery, errorResponses, SessionId } from "./schemas.js";
import { requireSession } from "./session-routes.js";
import type { SessionRunner } from "./session-runner.js";

type StreamContext = {
  store: Store;
  runner: SessionRunner;
  keepAliveMs: number;
  /** Told when a stream opens (+1) and when it ends (-1), for the `bdsh_sse_clients` gauge. */
  onClients?: (delta: 1 | -1) => void;
};

export function registerEventStream(routes: RouteTable, context: StreamContext): void {
  routes.add(
    "GET",
    "/v1/sessions/:id/events",
    {
      summary:
        "Durable events as Server-Sent Events (id: seq; resume with Last-Event-ID or ?after=), plus `event: delta` ephemeral text",
      params: SessionId,
      querystring: EventsQuery,
      response: { 200: { type: "string", description: "text/event-stream" }, ...errorResponses },
      eventStream: true,
    },
    (request, reply) => stream(request, reply, context),
  );
}

function resumeCursor(request: FastifyRequest): number {
  const query = request.query as Static<typeof EventsQuery>;
  const header = request.headers["last-event-id"];
  const last = Array.isArray(header) ? header[0] : header;
  if (last !== undefined && last !== "") {
    const seq = Number(last);
    if (!Number.isSafeInteger(seq) || seq < 0)
      throw new ApiError(400, "BAD_REQUEST", "Last-Event-ID must be a seq");
    return seq;
  }
  return query.after ?? 0;
}

async function stream(request: FastifyRequest, reply: FastifyReply, context: StreamContext): Promise<void> {
  const { id } = request.params as Static<typeof SessionId>;
  const query = request.query as Static<typeof EventsQuery>;
  const after = resumeCursor(request);
  await requireSession(context.store, id);
  const controller = new AbortController();
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  // A HEAD request gets the stream's head and nothing more: Node sends no body for HEAD and would hold the
  // head back until the response ends, which a stream never does.
  if (request.method === "HEAD") {
    raw.end();
    return;
  }
  raw.write(": stream\n\n");
  context.onClients?.(1);
  const close = () => controller.abort();
  request.raw.on("close", close);
  const keepAlive = setInterval(() => raw.write(": keep-alive\n\n"), context.keepAliveMs);
  keepAlive.unref();
  // Deltas come from the agent this server has open for the session, which may be opened (or replaced
  // after an eviction) after the client connected: look again whenever a turn or a step starts.
  let unsubscribeDeltas: (() => void) | undefined;
  let attached: Promise<Agent> | undefined;
  const attachDeltas = () => {
    if (query.deltas === false || controller.signal.aborted) return;
    const agent = context.runner.cachedAgent(id);
    if (!agent || agent === attached) return;
    attached = agent;
    void agent.then(
      (a) => {
        if (controller.signal.aborted || attached !== agent) return;
        unsubscribeDeltas?.();
        const sofar = a.liveReply();
        if (sofar && (sofar.text !== "" || sofar.reasoning !== ""))
          raw.write(`event: live\ndata: ${JSON.stringify({ ephemeral: true, ...sofar })}\n\n`);
        unsubscribeDeltas = a.onDelta((delta) => {
          raw.write(`event: delta\ndata: ${JSON.stringify({ ephemeral: true, ...delta })}\n\n`);
        });
      },
      () => undefined,
    );
  };
  attachDeltas();
  try {
    for await (const event of context.store.follow(id, { after, signal: controller.signal })) {
      if (event.type === "turn/start" || event.type === "step/start") attachDeltas();
      if (!raw.write(`id: ${event.seq}\nevent: event\ndata: ${eventJson(event)}\n\n`)) {
        await new Promise<void>((resolve) => {
          raw.once("drain", resolve);
          controller.signal.addEventListener("abort", () => resolve(), { once: true });
        });
      }
    }
  } catch (error) {
    request.log.warn({ err: error }, "event stream ended");
  } finally {
    clearInterval(keepAlive);
    context.onClients?.(-1);
    unsubscribeDeltas?.();
    request.raw.off("close", close);
    raw.end();
  }
}
