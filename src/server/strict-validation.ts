/**
 * Request validation for the plugin's routes (issue 8: "clear 4xx errors"; STANDARDS: bad input gets a clear
 * error). Fastify's default validator silently drops unknown body fields and coerces values, so a typo such
 * as `{"text":"hi","mdoe":"steer"}` would be accepted as a follow-up. Here a body must match its schema
 * exactly; path and query strings are converted to the declared types first (they are text on the wire).
 */
import type { FastifySchemaCompiler } from "fastify";
import type { TSchema } from "typebox";
import { Compile } from "typebox/compile";
import { Value } from "typebox/value";

export class RequestValidationError extends Error {
  readonly validation = true;
}

export const strictValidator: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const typed = schema as TSchema;
  const validator = Compile(typed);
  const where = httpPart === "body" || !httpPart ? "body" : httpPart;
  return (data: unknown) => {
    const value = where === "body" ? data : Value.Convert(typed, data);
    if (validator.Check(value)) return { value };
    const first = validator.Errors(value)[0];
    const segments = (first?.instancePath ?? "").split("/").filter(Boolean);
    // `additionalProperties: false` reports the extra property as a value failing the schema `false`.
    const unknown = first?.keyword === "boolean" || first?.keyword === "additionalProperties";
    const field = unknown ? segments.pop() : undefined;
    const path = [where, ...segments].join(".");
    const detail = unknown
      ? `unknown field ${JSON.stringify(field ?? "")}`
      : (first?.message ?? "does not match the schema");
    return { error: new RequestValidationError(`${path}: ${detail}`) };
  };
};
