/**
 * Errors the HTTP API answers with: `{error: {code, message}}` and a status (STYLE: errors are values with
 * codes at every boundary a user sees). Store errors with a code map to their status here, in one place.
 *
 * Invariants:
 * - Every answer that is not a success has that shape, whichever layer refused the request: a route, a
 *   hook, the body parser (bad JSON, empty JSON body, wrong content type, too large), the router (no
 *   route, wrong method, a malformed percent-encoding, an over-long path segment: `frameworkErrors`) or
 *   Node's HTTP parser (a malformed request: `clientErrorHandler`). The last two are server options the
 *   host passes (`bdshServerOptions` in ./plugin.ts); the rest the plugin installs itself.
 * - A 5xx never carries the cause's text (it may hold SQL or paths); the cause goes to the log.
 */
import type { Socket } from "node:net";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { SessionNotFoundError, StoreError } from "../store/store.js";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const notFound = (id: string) => new ApiError(404, "NOT_FOUND", `no session ${id}`);

export type ErrorPayload = { error: { code: string; message: string } };

/** The code of a 4xx Fastify or Node raises by itself, by status. */
const CODE_OF_STATUS: Record<number, string> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  408: "REQUEST_TIMEOUT",
  413: "PAYLOAD_TOO_LARGE",
  414: "URI_TOO_LONG",
  415: "UNSUPPORTED_MEDIA_TYPE",
  431: "HEADERS_TOO_LARGE",
};

export const BAD_URL_MESSAGE = "the URL is malformed (a bad percent-encoding)";
export const MISSING_HOST_MESSAGE = "the request has no Host header (HTTP/1.1 requires one)";

/** Router errors whose own text is not the one a client needs (and whose status is not the one we use). */
const ROUTER_ERRORS: Record<string, { status: number; message: string }> = {
  FST_ERR_BAD_URL: { status: 400, message: BAD_URL_MESSAGE },
  FST_ERR_MAX_PARAM_LENGTH: { status: 400, message: "a path segment of the URL is too long" },
};

/** The one error handler of the plugin's routes. */
export function errorHandler(
  log: (error: unknown) => void,
): (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, _request, reply) => {
    const { status, body } = describe(error);
    if (status >= 500) log(error);
    void reply.status(status).send(body);
  };
}

/** Fastify's `frameworkErrors` server option: router-level refusals in the documented shape. */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  errorHandler((cause) => request.log.error({ err: cause }, "request failed"))(error, request, reply);
}

/**
 * Fastify's `clientErrorHandler` server option: a request Node's HTTP parser refused (a malformed
 * Content-Length, headers too large, a timeout) is answered in the documented shape, then the socket closes.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [status, message] =
    error.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? [408, "the request took too long to arrive"]
      : error.code === "HPE_HEADER_OVERFLOW"
        ? [431, "the request headers are too large"]
        : [400, "the request is not valid HTTP"];
  if (socket.writable) socket.write(rawErrorResponse(status, CODE_OF_STATUS[status]!, message));
  socket.destroy(error);
}

/**
 * A whole HTTP/1.1 error response in the documented shape, for a socket no framework answers on: Node's
 * parser refused the request, or an upgrade was refused before it became a WebSocket.
 */
export function rawErrorResponse(status: number, code: string, message: string): string {
  const body = JSON.stringify({ error: { code, message } });
  return (
    `HTTP/1.1 ${status} ${CODE_OF_STATUS[status] ?? code}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

function describe(error: FastifyError | Error): { status: number; body: ErrorPayload } {
  const payload = (status: number, code: string, message: string) => ({
    status,
    body: { error: { code, message } },
  });
  if (error instanceof ApiError) return payload(error.status, error.code, error.message);
  if (error instanceof SessionNotFoundError) return payload(404, "NOT_FOUND", error.message);
  if (error instanceof StoreError) return payload(409, error.code, error.message);
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return payload(400, "BAD_REQUEST", error.message);
  const router = fastifyError.code ? ROUTER_ERRORS[fastifyError.code] : undefined;
  if (router) return payload(router.status, CODE_OF_STATUS[router.status]!, router.message);
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500)
    return payload(status, CODE_OF_STATUS[status] ?? "BAD_REQUEST", error.message);
  return payload(500, "INTERNAL", "internal error; see the server log");
}
