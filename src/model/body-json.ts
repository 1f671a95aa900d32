/**
 * A request body as JSON text with its `messages` array spliced in as already-joined JSON, so a codec can
 * serialize a session's history once and a request costs its new messages, not the whole history again
 * (ARCHITECTURE: requests extend each other byte for byte, M23). The text is byte for byte what
 * `JSON.stringify` gives for the object with the keys of `head`, then `messages`, then the keys of `tail`,
 * then those of `tailText`.
 */
import { startsWithSame } from "../log/prefix.js";

export type BodyParts = {
  head: Record<string, unknown>;
  /** The wire messages' JSON texts joined with commas (no brackets). */
  messages: string;
  tail: Record<string, unknown>;
  /** Keys after `tail`'s whose values are JSON text already (the declared tools, written once each). */
  tailText?: ReadonlyArray<readonly [key: string, json: string]>;
};

export function bodyJson(parts: BodyParts): string {
  const head = JSON.stringify(parts.head);
  let tail = JSON.stringify(parts.tail);
  for (const [key, json] of parts.tailText ?? [])
    tail = `${tail === "{}" ? "{" : `${tail.slice(0, -1)},`}${JSON.stringify(key)}:${json}}`;
  const open = head === "{}" ? "{" : `${head.slice(0, -1)},`;
  const close = tail === "{}" ? "}" : `,${tail.slice(1)}`;
  return `${open}"messages":[${parts.messages}]${close}`;
}

/** Joins JSON texts onto `after` with commas, skipping what is not sent (`undefined` or empty). */
export function joinJson(texts: Iterable<string | undefined>, after = ""): string {
  let joined = after;
  for (const text of texts) {
    if (text === undefined || text === "") continue;
    joined = joined === "" ? text : `${joined},${text}`;
  }
  return joined;
}

type Conversation<M, Variant> = { variant: Variant; messages: readonly M[]; joined: string };

/**
 * The joined JSON of a message list that grows at its end, as a session's requests do.
 *
 * - Each message's JSON is made once per message object and variant (the codec's preset); history messages
 *   are never changed in place (an edit of the surface is a new message object).
 * - When a list starts with the very message objects of the previous call for the same conversation (keyed
 *   by its first message), only the new messages are joined onto the text already made; any other list
 *   (compaction replaced a range, another preset) is joined whole from the per-message cache.
 * - The joined texts of the last `capacity` conversations are kept (least recently used out), so memory is
 *   bounded in a server that drives many sessions.
 */
export class GrowingJsonList<M extends object, Variant> {
  private readonly fragments = new WeakMap<M, { variant: Variant; json: string | undefined }>();
  private readonly conversations = new Map<M, Conversation<M, Variant>>();

  constructor(
    /** The wire form of a message, or undefined when it is not sent. */
    private readonly wire: (message: M, variant: Variant) => unknown,
    private readonly capacity = 32,
  ) {}

  join(messages: readonly M[], variant: Variant): string {
    const first = messages[0];
    if (first === undefined) return "";
    const known = this.conversations.get(first);
    this.conversations.delete(first);
    let joined: string;
    if (known && known.variant === variant && startsWithSame(messages, known.messages)) {
      joined = joinJson(this.jsonOf(messages.slice(known.messages.length), variant), known.joined);
    } else {
      joined = joinJson(this.jsonOf(messages, variant));
    }
    this.conversations.set(first, { variant, messages: messages.slice(), joined });
    if (this.conversations.size > this.capacity) {
      const oldest = this.conversations.keys().next().value;
      if (oldest !== undefined) this.conversations.delete(oldest);
    }
    return joined;
  }

  /** One message's JSON (cached per object and variant). */
  fragment(message: M, variant: Variant): string | undefined {
    const hit = this.fragments.get(message);
    if (hit && hit.variant === variant) return hit.json;
    const wire = this.wire(message, variant);
    const json = wire === undefined ? undefined : JSON.stringify(wire);
    this.fragments.set(message, { variant, json });
    return json;
  }

  private *jsonOf(messages: readonly M[], variant: Variant): Iterable<string | undefined> {
    for (const message of messages) yield this.fragment(message, variant);
  }
}
