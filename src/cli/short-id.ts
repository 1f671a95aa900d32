/**
 * Session ids people can type. A UUIDv7's first digits are its time, so sessions made in the same minute
 * share them; its last 8 hex digits are random. The short id is those 8 digits (`2d5782f4` for
 * `01a24e0e-ea30-75ce-829b-d90d2d5782f4`); an id that is not a UUID is its own short id.
 *
 * Accepted wherever an id is (session-select.ts `findSession`), after the store's own lookup (an exact id
 * or a unique prefix, dashes as stored) finds nothing: a short id, or a prefix written without its dashes
 * (`01a248edd7`). Several matches are ambiguous, named as such; nothing is guessed.
 */
import type { SessionRow, Store } from "../store/store.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const SHORT_ID_LENGTH = 8;

export function shortId(id: string): string {
  return UUID.test(id) ? id.slice(-SHORT_ID_LENGTH) : id;
}

/** Rows of a listing page: the store returns at most this many per call. */
const PAGE = 500;

/** Every session of the store (archived and children included), page by page in id order. */
async function* allSessions(store: Store): AsyncGenerator<SessionRow> {
  let before: string | undefined;
  for (;;) {
    const rows = await store.listSessions({
      limit: PAGE,
      includeArchived: true,
      ...(before ? { before } : {}),
    });
    yield* rows;
    if (rows.length < PAGE) return;
    before = rows.at(-1)!.id;
  }
}

/** Whether `ref` has the form of a short id (8 hex digits). */
export function isShortId(ref: string): boolean {
  return new RegExp(`^[0-9a-f]{${SHORT_ID_LENGTH}}$`, "i").test(ref);
}

/**
 * The ids `ref` names as a short id or as a prefix written without dashes (empty when it is neither); an
 * exact id alone when one is `ref`.
 */
export async function idsForTypedRef(store: Store, ref: string): Promise<string[]> {
  const typed = ref.toLowerCase();
  if (!/^[0-9a-f]+$/.test(typed)) return [];
  const matches: string[] = [];
  for await (const row of allSessions(store)) {
    if (row.id === ref) return [row.id];
    if (!UUID.test(row.id)) continue;
    const id = row.id.toLowerCase();
    if (id.endsWith(typed) && typed.length === SHORT_ID_LENGTH) matches.push(row.id);
    else if (typed.length >= SHORT_ID_LENGTH && id.replace(/-/g, "").startsWith(typed)) matches.push(row.id);
  }
  return matches;
}
