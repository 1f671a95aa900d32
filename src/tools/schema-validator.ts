/**
 * One JSON-Schema validator for builtin, plugin and MCP tools (T3), covering the subset of `JsonSchema` in
 * types.ts: type, properties, required, additionalProperties, items, enum, oneOf, anyOf and the numeric,
 * length and count bounds.
 *
 * Why our own: the messages are protocol (T3 wording, model-visible) and the subset is small; a general
 * validator's errors would have to be re-worded path by path anyway.
 *
 * Invariants:
 * - Violations come out in a stable order (declared properties first, in schema order) and each reads as one
 *   of T3's forms: `missing required property "x"`, `"y" must be a string`, `"p" must be one of [...]`,
 *   `"p" is not a declared property (additionalProperties: false)`,
 *   `"p" must match exactly one oneOf branch (matched N)`.
 * - Paths are `a.b[2].c`; the root is `arguments`.
 */
import type { JsonSchema } from "./types.js";

export const ROOT_PATH = "arguments";

export function validateArguments(schema: JsonSchema, value: unknown): string[] {
  const violations: string[] = [];
  check(schema, value, ROOT_PATH, violations);
  return violations;
}

/** `Error: invalid arguments: <violation>; <violation>` (T3). */
export function invalidArgumentsText(violations: readonly string[]): string {
  return `Error: invalid arguments: ${violations.join("; ")}`;
}

function child(path: string, key: string): string {
  return path === ROOT_PATH ? key : `${path}.${key}`;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matchesType(expected: string, value: unknown): boolean {
  const actual = typeOf(value);
  if (expected === actual) return true;
  if (expected === "number") return actual === "integer";
  return false;
}

const ARTICLE: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "a boolean",
  null: "null",
  array: "an array",
  object: "an object",
};

function describeTypes(types: readonly string[]): string {
  return types.map((type) => ARTICLE[type] ?? type).join(" or ");
}

function check(schema: JsonSchema, value: unknown, path: string, out: string[]): void {
  if (schema.oneOf) {
    const matched = schema.oneOf.filter((branch) => validateArguments(branch, value).length === 0).length;
    if (matched !== 1) out.push(`"${path}" must match exactly one oneOf branch (matched ${matched})`);
  }
  if (schema.anyOf && !schema.anyOf.some((branch) => validateArguments(branch, value).length === 0)) {
    out.push(`"${path}" must match at least one anyOf branch`);
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => matchesType(type, value))) {
      out.push(`"${path}" must be ${describeTypes(types)}`);
      return;
    }
  }
  if (schema.enum && !schema.enum.some((option) => sameValue(option, value))) {
    out.push(`"${path}" must be one of [${schema.enum.map((option) => JSON.stringify(option)).join(", ")}]`);
    return;
  }
  if (typeof value === "number") checkNumber(schema, value, path, out);
  else if (typeof value === "string") checkString(schema, value, path, out);
  else if (Array.isArray(value)) checkArray(schema, value, path, out);
  else if (value !== null && typeof value === "object") {
    checkObject(schema, value as Record<string, unknown>, path, out);
  }
}

function checkNumber(schema: JsonSchema, value: number, path: string, out: string[]): void {
  if (schema.minimum !== undefined && value < schema.minimum) {
    out.push(`"${path}" must be >= ${schema.minimum}`);
  }
  if (schema.maximum !== undefined && value > schema.maximum) {
    out.push(`"${path}" must be <= ${schema.maximum}`);
  }
}

function checkString(schema: JsonSchema, value: string, path: string, out: string[]): void {
  if (schema.minLength !== undefined && value.length < schema.minLength) {
    out.push(`"${path}" must be at least ${schema.minLength} characters long`);
  }
  if (schema.maxLength !== undefined && value.length > schema.maxLength) {
    out.push(`"${path}" must be at most ${schema.maxLength} characters long`);
  }
}

function checkArray(schema: JsonSchema, value: unknown[], path: string, out: string[]): void {
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    out.push(`"${path}" must have at least ${schema.minItems} items`);
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    out.push(`"${path}" must have at most ${schema.maxItems} items`);
  }
  const items = schema.items;
  if (!items) return;
  for (const [index, item] of value.entries()) check(items, item, `${path}[${index}]`, out);
}

function checkObject(schema: JsonSchema, value: Record<string, unknown>, path: string, out: string[]): void {
  const properties = schema.properties ?? {};
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name) || value[name] === undefined) {
      out.push(`missing required property "${child(path, name)}"`);
    }
  }
  for (const [name, propertySchema] of Object.entries(properties)) {
    if (Object.hasOwn(value, name) && value[name] !== undefined) {
      check(propertySchema, value[name], child(path, name), out);
    }
  }
  for (const name of Object.keys(value)) {
    if (Object.hasOwn(properties, name)) continue;
    const extra = schema.additionalProperties;
    if (extra === false) {
      out.push(`"${child(path, name)}" is not a declared property (additionalProperties: false)`);
    } else if (extra && typeof extra === "object") {
      check(extra, value[name], child(path, name), out);
    }
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
