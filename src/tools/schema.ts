/**
 * Tool argument schemas in TypeBox (T1): one declaration gives both the JSON Schema the model is sent and,
 * with `Static<typeof Schema>`, the type of the arguments `execute` receives (the pipeline validates them
 * against the same schema first).
 *
 * Invariants:
 * - SP8, M23: the declarations are part of every request's prefix, so their bytes do not depend on how a
 *   schema is built. `toolParameters` writes every schema's keys in one fixed order (the order the
 *   hand-written schemas always had: `type`, bounds, `enum`, `items`, `properties`, `required`,
 *   `additionalProperties`, `description`), and test/tools/declarations.test.ts holds them to the bytes
 *   sent before.
 * - A closed list of strings is `{ "type": "string", "enum": [...] }` (`StringEnum`), not TypeBox's
 *   `anyOf` of constants: shorter, and the form models are used to.
 */
import { type Static, type TObject, type TSchema, type TUnsafe, Type } from "typebox";
import { deepFreeze } from "./arguments.js";
import type { JsonSchema, ObjectSchema } from "./types.js";

export { type Static, Type };

/** A string from a fixed list; its static type is the union of the values. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string } = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

/** An object of any shape (a JSON Schema a caller passes, a request body): `{ type: "object" }` only. */
export function AnyObject(options: { description?: string } = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ type: "object", ...options });
}

const KEY_ORDER = [
  "type",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "enum",
  "items",
  "properties",
  "required",
  "additionalProperties",
  "description",
];
const rank = (key: string) => {
  const index = KEY_ORDER.indexOf(key);
  return index === -1 ? KEY_ORDER.length : index;
};

/** Declarations already written, by schema: tools are built per agent from the same module-level schemas. */
const declared = new WeakMap<TObject, ObjectSchema>();

/**
 * The JSON Schema a tool declares, from its TypeBox schema, with its keys in the declared order. Written once
 * per schema and frozen, as every agent of the process shares it.
 */
export function toolParameters(schema: TObject): ObjectSchema {
  let parameters = declared.get(schema);
  if (!parameters) {
    parameters = deepFreeze(ordered(schema)) as ObjectSchema;
    declared.set(schema, parameters);
  }
  return parameters;
}

function ordered(schema: TSchema | JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  const keys = Object.keys(schema).sort((a, b) => rank(a) - rank(b));
  for (const key of keys) {
    const value = (schema as Record<string, unknown>)[key];
    if (key === "properties" && value && typeof value === "object") {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([name, inner]) => [name, ordered(inner)]),
      );
    } else if ((key === "items" || key === "additionalProperties") && isSchema(value)) {
      out[key] = ordered(value);
    } else if ((key === "anyOf" || key === "oneOf") && Array.isArray(value)) {
      out[key] = value.map((inner) => (isSchema(inner) ? ordered(inner) : inner));
    } else {
      out[key] = value;
    }
  }
  return out;
}

function isSchema(value: unknown): value is JsonSchema {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
