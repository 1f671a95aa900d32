/**
 * The parts of `bdshPlugin` that every request meets before (or instead of) a session route: the request
 * id and session id on its log lines, the Host check on loopback (DNS rebinding), the Origin check on a
 * state change (CSRF), JSON-only bodies, refusals in the API's shape, and the routes that are about the
 * server itself (health, readiness, metrics, the OpenAPI document).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Store } from "../store/store.js";
import { ApiError, errorHandler, MISSING_HOST_MESSAGE } from "./api-error.js";
import { hostAllowed, isLoopbackAddress } from "./auth.js";
import { isStateChanging, sameOrigin } from "./dashboard-session.js";
import type { ServerMetrics } from "./metrics.js";
import type { RouteTable } from "./openapi.js";
import { Health, Ready } from "./schemas.js";
import type { SessionRunner } from "./session-runner.js";

export const FORBIDDEN_ORIGIN_MESSAGE =
  "a state-changing request signed in by cookie must come from this server's own origin (Origin header)";

/** The hooks, error handler and body parser every request of the plugin goes through. */
export function guardRequests(app: FastifyInstance, allowedHosts: readonly string[]): void {
  // The request id on the response, and the session id on every line a session route logs.
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });
  app.addHook("preHandler", async (request, reply) => {
    const id = (request.params as { id?: unknown } | undefined)?.id;
    if (typeof id !== "string") return;
    request.log = request.log.child({ sessionId: id });
    reply.log = request.log; // the "request completed" line is the reply's
  });
  // DNS rebinding: a page on a name rebound to 127.0.0.1 reaches a loopback server with its own Host.
  app.addHook("onRequest", async (request: FastifyRequest) => {
    if (isLoopbackAddress(request.socket.localAddress) && !hostAllowed(request.headers.host, allowedHosts))
      throw new ApiError(
        403,
        "FORBIDDEN_HOST",
        "the Host header must be localhost, 127.0.0.1 or [::1] on a loopback server",
      );
    if (!request.headers.host) throw new ApiError(400, "BAD_REQUEST", MISSING_HOST_MESSAGE);
    // CSRF: a browser names the page that sent a request; a state change from another origin is refused.
    if (
      isStateChanging(request.method) &&
      request.headers.origin !== undefined &&
      !sameOrigin(request.headers)
    )
      throw new ApiError(403, "FORBIDDEN_ORIGIN", FORBIDDEN_ORIGIN_MESSAGE);
  });
  app.setErrorHandler(errorHandler((error) => app.log.error({ err: error }, "request failed")));
  // Only JSON bodies: Fastify's default text/plain parser would hand a string to the validators.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    "application/json",
    { parseAs: "string" },
    app.getDefaultJsonParser("error", "error"),
  );
}

/** A path with other methods is 405 with `Allow`; an unknown path is 404; both in the API's shape. */
export function answerUnknownRoutes(app: FastifyInstance, routes: RouteTable): void {
  app.setNotFoundHandler((request, reply) => {
    const allowed = routes.allowedMethods(request.url);
    if (allowed.length) {
      void reply
        .status(405)
        .header("allow", allowed.join(", "))
        .send({
          error: {
            code: "METHOD_NOT_ALLOWED",
            message: `${request.method} is not allowed here; use ${allowed.join(", ")}`,
          },
        });
      return;
    }
    void reply
      .status(404)
      .send({ error: { code: "NOT_FOUND", message: `no route ${request.method} ${request.url}` } });
  });
}

/** `/healthz` (the process is up) and `/readyz` (the store answers and the runner takes work); no token. */
export function registerProbeRoutes(
  routes: RouteTable,
  server: { owner: string; runner: Pick<SessionRunner, "stopped" | "stats">; store: Store },
): void {
  const { owner, runner, store } = server;
  routes.add(
    "GET",
    "/healthz",
    { summary: "The process is up", response: { 200: Health } },
    async () => ({ ok: true, owner }),
    false,
  );
  routes.add(
    "GET",
    "/readyz",
    { summary: "The store answers and the server takes work", response: { 200: Ready, 503: Ready } },
    async (_request, reply) => {
      const ok =
        !runner.stopped &&
        (await store.listSessions({ limit: 1 }).then(
          () => true,
          () => false,
        ));
      reply.status(ok ? 200 : 503);
      return { ready: ok, store: store.kind, sessions: runner.stats() };
    },
    false,
  );
}

/** Prometheus metrics of this server; the token is needed unless `server.metrics_public`. */
export function registerMetricsRoute(routes: RouteTable, metrics: ServerMetrics, isPublic: boolean): void {
  routes.add(
    "GET",
    "/metrics",
    {
      summary:
        "Prometheus metrics of this server (text format); needs the token unless server.metrics_public",
      response: { 200: { type: "string" } },
      textMedia: "text/plain",
    },
    async (_request, reply) => {
      const { contentType, body } = await metrics.exposition();
      reply.type(contentType);
      return body;
    },
    !isPublic,
  );
}

/** The OpenAPI document of every route registered so far, with the host's prefix. */
export function registerOpenApiRoute(routes: RouteTable): void {
  routes.add(
    "GET",
    "/v1/openapi.json",
    { summary: "This document", response: { 200: { type: "object", additionalProperties: true } } },
    async (request) =>
      routes.document(
        { title: "better-dsh", version: "1" },
        request.routeOptions.url?.replace(/\/v1\/openapi\.json$/, "") ?? "",
      ),
  );
}
