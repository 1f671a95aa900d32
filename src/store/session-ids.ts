/**
 * Session ids typed by a person: a unique prefix is enough, as with git. What the two
 * stores share: the id range a prefix covers, the rule that picks the one match, and the shortest prefix
 * that names an id unambiguously.
 *
 * Invariants:
 * - An exact id always wins, even when it is also the prefix of a longer id (`child-1`, `child-10`).
 * - Two or more matches are an `AmbiguousSessionIdError` naming at most `MAX_CANDIDATES` of them; none is a
 *   `SessionNotFoundError`. Nothing is ever guessed.
 * - Ids compare byte-wise in both stores (SQLite BINARY, PostgreSQL `COLLATE "C"`), so a prefix is a range.
 */
import { InvalidInputError } from "./rows.js";
import { SessionNotFoundError, StoreError } from "./store.js";

/** How many candidates an ambiguity error names. */
export const MAX_CANDIDATES = 5;

/** The shortest prefix a listing shows (a UUIDv7's first 8 hex digits only tell the minute apart). */
export const MIN_PREFIX_LENGTH = 8;

export class AmbiguousSessionIdError extends StoreError {
  constructor(
    readonly prefix: string,
    /** At most `MAX_CANDIDATES` matching ids, in id order. */
    readonly candidates: readonly string[],
    /** Whether more matched than are named. */
    readonly more: boolean,
  ) {
    super(
      "SESSION_AMBIGUOUS",
      `session id prefix ${prefix} is ambiguous: ${candidates.join(", ")}${more ? ", …" : ""}`,
    );
  }
}

/** `[low, high)`: every id that starts with `prefix` sorts in it (U+10FFFF is the largest code point). */
export function prefixRange(prefix: string): { low: string; high: string } {
  if (prefix.length === 0) throw new InvalidInputError("a session id prefix cannot be empty");
  return { low: prefix, high: `${prefix}\u{10FFFF}` };
}

/**
 * The one id `prefix` names, from up to `MAX_CANDIDATES + 1` ids of its range in id order (the query asks
 * for one more than it names, to know whether there are more).
 */
export function pickSessionId(prefix: string, ids: readonly string[]): string {
  const matches = ids.filter((id) => id.startsWith(prefix));
  if (matches.includes(prefix)) return prefix;
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new SessionNotFoundError(prefix);
  throw new AmbiguousSessionIdError(
    prefix,
    matches.slice(0, MAX_CANDIDATES),
    matches.length > MAX_CANDIDATES,
  );
}

/** The shortest prefix of `id` (at least `minLength`) that neither neighbour in id order shares. */
export function uniquePrefix(
  id: string,
  neighbours: { previous: string | null; next: string | null },
  minLength = MIN_PREFIX_LENGTH,
): string {
  const shared = Math.max(commonPrefix(id, neighbours.previous), commonPrefix(id, neighbours.next));
  return id.slice(0, Math.min(id.length, Math.max(minLength, shared + 1)));
}

function commonPrefix(a: string, b: string | null): number {
  if (b === null) return 0;
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}
