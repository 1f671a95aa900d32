/**
 * Request validation for the plugin's routes ("clear 4xx errors"; STANDARDS: bad input gets a clear
 * error). Fastify's default validator silently drops unknown body fields and coerces values, so a typo such
 * as `{"text":"hi","mdoe":"steer"}` would be accepted as a follow-up. Here a body must match its schema
 * exactly; path and query strings are converted to the declared types first (they are text on the wire).
 *
 * No string anywhere in a request (values and keys) may hold a NUL or an unpaired
 * surrogate. PostgreSQL refuses both (a NUL in text, `\ud800` in jsonb), so such a request would
 * otherwise fail as a 500, or later, as a session whose log cannot be written. The walk is iterative: a
 * body nested a hundred thousand levels deep costs a loop, not the stack.
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
  // Path and query values arrive as strings: only a schema declaring another type needs them converted
  // (Value.Convert walks and copies the value on every request, even when nothing changes).
  const convert = where !== "body" && !onlyStringProperties(typed);
  return (data: unknown) => {
    const invalid = invalidStringPath(data);
    if (invalid !== undefined)
      return {
        error: new RequestValidationError(
          `${[where, ...invalid].join(".")}: contains a NUL character or an unpaired surrogate`,
        ),
      };
    const value = convert ? Value.Convert(typed, data) : data;
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

/** An object schema whose every property is a plain string (a session id's path, say). */
function onlyStringProperties(schema: TSchema): boolean {
  const properties = (schema as { type?: unknown; properties?: Record<string, { type?: unknown }> })
    .properties;
  return (
    (schema as { type?: unknown }).type === "object" &&
    properties !== undefined &&
    Object.values(properties).every((property) => property.type === "string")
  );
}

/** A NUL, or a surrogate half without its partner. */
const INVALID_TEXT = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text both stores can hold: no NUL, no unpaired surrogate (for strings outside a route's schema). */
export function isStorableText(text: string): boolean {
  return !INVALID_TEXT.test(text);
}

type Visit = { value: unknown; key?: string; parent?: Visit };

/** The path of the first string (value or key) that is not well-formed text, if any. */
function invalidStringPath(data: unknown): string[] | undefined {
  const pathOf = (visit: Visit | undefined, last?: string) => {
    const path: string[] = last === undefined ? [] : [last];
    for (let at = visit; at?.key !== undefined; at = at.parent) path.push(at.key);
    return path.reverse();
  };
  const stack: Visit[] = [{ value: data }];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const { value } = visit;
    if (typeof value === "string") {
      if (INVALID_TEXT.test(value)) return pathOf(visit);
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push({ value: value[i], key: String(i), parent: visit });
    } else if (value !== null && typeof value === "object") {
      for (const [key, element] of Object.entries(value)) {
        if (INVALID_TEXT.test(key)) return pathOf(visit, JSON.stringify(key));
        stack.push({ value: element, key, parent: visit });
      }
    }
  }
  return undefined;
}
