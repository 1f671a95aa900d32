/**
 * Errors the HTTP API answers with: `{error: {code, message}}` and a status (STYLE: errors are values with
 * codes at every boundary a user sees). Store errors with a code map to their status here, in one place.
 */
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
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    const code =
      status === 413 ? "PAYLOAD_TOO_LARGE" : status === 415 ? "UNSUPPORTED_MEDIA_TYPE" : "BAD_REQUEST";
    return payload(status, code, error.message);
  }
  return payload(500, "INTERNAL", "internal error; see the server log");
}
