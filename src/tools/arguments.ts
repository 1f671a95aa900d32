/**
 * Tool-call arguments as the pipeline receives them (T2 step 1, M9, M15).
 *
 * The model layer already repairs JSON; whatever still is not a JSON object here becomes `undefined`, and
 * the pipeline answers `Error: invalid arguments: "arguments" must be an object`. An empty string is `{}`
 * (models send it for tools without parameters). The parse is deep-frozen: arguments cannot be rewritten.
 */

export const NOT_AN_OBJECT_TEXT = 'Error: invalid arguments: "arguments" must be an object';

export function parseToolArguments(raw: string): Readonly<Record<string, unknown>> | undefined {
  if (raw.trim() === "") return Object.freeze({});
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  return deepFreeze(value as Record<string, unknown>);
}

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** Canonical JSON with sorted keys (G1 compares calls by it). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort())
      sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}
