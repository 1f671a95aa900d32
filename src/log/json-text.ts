/**
 * JSON text made once per object, for values never changed after they are made: the tool declarations a
 * request carries (and their wire forms). Every request of every agent declares the same tools (SP8), so a
 * process writes each declaration's text once instead of once per request, per hash and per token estimate.
 *
 * - Only frozen objects are cached (the registry freezes a declaration whose schema is deep-frozen, and
 *   shares it between agents): the cache is keyed by identity and never rechecks the content. Any other
 *   object is written afresh each time, as before.
 * - The text is byte for byte `JSON.stringify`'s, so hashes and request bodies do not change with the cache.
 * - Weakly held: a declaration that no agent holds any more takes its text with it.
 */

/** `item => JSON.stringify(shape(item))`, made once per frozen item (compared by identity). */
export function cachedJsonText<T extends object>(shape: (item: T) => unknown): (item: T) => string {
  const texts = new WeakMap<T, string>();
  return (item) => {
    if (!Object.isFrozen(item)) return JSON.stringify(shape(item));
    let text = texts.get(item);
    if (text === undefined) {
      text = JSON.stringify(shape(item));
      texts.set(item, text);
    }
    return text;
  };
}

/** `JSON.stringify(value)` of an object never changed once made. */
export const jsonTextOf: (value: object) => string = cachedJsonText((value) => value);

/** `JSON.stringify(items.map(shape))` from the items' texts (`textOf`, default `jsonTextOf`). */
export function jsonArrayText<T extends object>(
  items: readonly T[],
  textOf: (item: T) => string = jsonTextOf,
): string {
  let joined = "";
  for (const item of items) joined = joined === "" ? textOf(item) : `${joined},${textOf(item)}`;
  return `[${joined}]`;
}
