/**
 * Tool-call arguments as the pipeline receives them (T2 step 1, M9, M15).
 *
 * The model layer already repairs JSON; whatever still is not a JSON object here becomes `undefined`, and
 * the pipeline answers with `argumentsRefusalText`: the object error, or the bound the arguments broke. An
 * empty string is `{}` (models send it for tools without parameters). The parse is deep-frozen: arguments
 * cannot be rewritten.
 *
 * The arguments are model output, so untrusted: before anything walks them (the freeze, the validator,
 * guards, plugins), their size and nesting are bounded here, in one linear scan that recurses nowhere. No
 * tool's schema comes near either bound; a call over one is the call's error result, which the model reads
 * and can act on, never a step that fails on a stack overflow.
 */

export const NOT_AN_OBJECT_TEXT = 'Error: invalid arguments: "arguments" must be an object';

/** Deeper than any tool's schema; far below what a recursive walk of the value can take. */
export const MAX_ARGUMENT_DEPTH = 100;
/** More than a model writes in one reply at any output limit in the catalog. */
export const MAX_ARGUMENTS_BYTES = 1024 * 1024;

export function parseToolArguments(raw: string): Readonly<Record<string, unknown>> | undefined {
  if (raw.trim() === "") return Object.freeze({});
  if (argumentsOverBounds(raw) !== undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  return deepFreeze(value as Record<string, unknown>);
}

/** What the model reads when its arguments did not parse to an object (`parseToolArguments` gave none). */
export function argumentsRefusalText(raw: string): string {
  return argumentsOverBounds(raw) ?? NOT_AN_OBJECT_TEXT;
}

/** The refusal for arguments too large or too deeply nested, or `undefined` within both bounds. */
function argumentsOverBounds(raw: string): string | undefined {
  // A UTF-16 length under a quarter of the bound cannot be over it in UTF-8 (at most 3 bytes a unit).
  const bytes = raw.length * 3 <= MAX_ARGUMENTS_BYTES ? raw.length : Buffer.byteLength(raw);
  if (bytes > MAX_ARGUMENTS_BYTES)
    return `Error: invalid arguments: ${bytes} bytes, over the ${MAX_ARGUMENTS_BYTES} bytes one tool call may carry; split the work into smaller calls`;
  if (nestingDepth(raw) > MAX_ARGUMENT_DEPTH)
    return `Error: invalid arguments: nested more than ${MAX_ARGUMENT_DEPTH} levels deep; send flatter arguments`;
  return undefined;
}

/** The deepest `[`/`{` nesting of JSON text, brackets inside strings not counted (stops past the bound). */
function nestingDepth(raw: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next unit
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > MAX_ARGUMENT_DEPTH) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
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
