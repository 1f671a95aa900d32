/**
 * A request body as JSON text with its `messages` array spliced in from per-message JSON fragments, so a
 * codec can cache each history message's fragment and a request costs its new messages, not the whole
 * history again. The text is byte for byte what `JSON.stringify` gives for the object with the keys of
 * `head`, then `messages`, then the keys of `tail`.
 */
export type BodyParts = {
  head: Record<string, unknown>;
  /** One JSON text per wire message, in order. */
  messages: readonly string[];
  tail: Record<string, unknown>;
};

export function bodyJson(parts: BodyParts): string {
  const head = JSON.stringify(parts.head);
  const tail = JSON.stringify(parts.tail);
  const open = head === "{}" ? "{" : `${head.slice(0, -1)},`;
  const close = tail === "{}" ? "}" : `,${tail.slice(1)}`;
  return `${open}"messages":[${parts.messages.join(",")}]${close}`;
}

/**
 * Per message object, the JSON fragment a codec made of it under one preset (history messages are never
 * changed in place: an edit of the surface is a new message object). `undefined`-valued fragments mean the
 * message is not sent.
 */
export class FragmentCache<Key extends object, Variant> {
  private readonly cache = new WeakMap<Key, { variant: Variant; json: string | undefined }>();

  get(key: Key, variant: Variant, make: () => unknown): string | undefined {
    const hit = this.cache.get(key);
    if (hit && hit.variant === variant) return hit.json;
    const wire = make();
    const json = wire === undefined ? undefined : JSON.stringify(wire);
    this.cache.set(key, { variant, json });
    return json;
  }
}
