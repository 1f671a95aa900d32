/**
 * The server's structured logs: Fastify's own pino logger, configured, not a second one.
 *
 * Invariants:
 * - One JSON object per line on stderr: `level` (a name), `time`, `msg`, `reqId` on everything a request
 *   logs, `sessionId` on everything a session route or a session's driver logs.
 * - Every line passes the process's redactor before it is written: a secret in an error
 *   message, a header or a stack never reaches the log. The redactor knows each secret in its JSON-escaped
 *   form too, so redacting the serialized line is enough.
 * - The request id is the caller's `x-request-id` when it is a short token of safe characters (so a proxy's
 *   id correlates), else a new UUID; it is echoed on the response's `x-request-id`.
 * - On a terminal the same records are printed in a human format (`12:00:01 WARN [req-id] message k=v`).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { FastifyServerOptions } from "fastify";
import type { Redactor } from "../log/redact.js";

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export type ServerLoggingOptions = {
  level: LogLevel;
  redactor: Redactor;
  /** Where lines go (default: stderr). */
  destination?: { write(line: string): unknown; isTTY?: boolean };
  /** Human lines instead of JSON (default: when the destination is a terminal). */
  human?: boolean;
};

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id: the caller's `x-request-id` when it is safe to log, else a new one. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Options for the host's `Fastify({...})`: the logger, its stream and the request id. */
export function serverLogging(
  options: ServerLoggingOptions,
): Pick<FastifyServerOptions, "logger" | "genReqId" | "requestIdLogLabel"> {
  const out = options.destination ?? process.stderr;
  const human = options.human ?? out.isTTY === true;
  const stream = {
    write(line: string): void {
      const clean = options.redactor.text(line);
      out.write(human ? humanLine(clean) : clean);
    },
  };
  return {
    logger: {
      level: options.level,
      formatters: { level: (label: string) => ({ level: label }) },
      stream,
    },
    genReqId: requestIdOf,
    requestIdLogLabel: "reqId",
  };
}

const OMITTED = new Set(["level", "time", "msg", "reqId", "pid", "hostname"]);

/** One JSON record as a terminal line; a line that is not JSON is passed through. */
export function humanLine(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof record.time === "number" ? new Date(record.time).toISOString().slice(11, 19) : "";
  const level = String(record.level ?? "").toUpperCase();
  const id = record.reqId ? ` [${String(record.reqId)}]` : "";
  const rest = Object.entries(record)
    .filter(([key]) => !OMITTED.has(key))
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  return `${[time, level.padEnd(5)].join(" ")}${id} ${String(record.msg ?? "")}${rest.length ? ` ${rest.join(" ")}` : ""}\n`;
}
