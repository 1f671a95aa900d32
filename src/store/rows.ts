/**
 * What the two dialects share: input validation, the encoding of new rows, and the mapping of stored rows
 * back to the API's objects. Keeping it here means SQLite and PostgreSQL cannot drift apart on a detail such
 * as how `data` is encoded or which defaults a new session gets.
 *
 * Invariants:
 * - `data` is encoded once with `JSON.stringify` and stored as that text; reading parses the same text, so
 *   tool-call arguments and key order come back exactly as written (M23: same request after a takeover).
 * - An append's seqs are `expectedSeq + 1 …` with no gaps (dense, per session).
 * - Timestamps leave the store as ISO-8601 UTC strings.
 * - Inbox items (L4) and spilled blobs (C15) are rows like events: a server that dies loses none of them.
 */
import { v7 as uuidv7 } from "uuid";
import type {
  EventType,
  InboxMode,
  InboxQueue,
  LogEvent,
  NewEvent,
  SessionKind,
  UserSource,
} from "../log/events.js";
import {
  type ActivityCursor,
  type AppendOptions,
  type BlobRef,
  type CreateSessionInput,
  type InboxItem,
  type ListSessionsOptions,
  type NewInboxItem,
  type SessionRow,
  StoreError,
} from "./store.js";

export const DEFAULT_LIST_LIMIT = 100;

export function newId(): string {
  return uuidv7();
}

export function isoNow(): string {
  return new Date().toISOString();
}

export function isoOf(value: string | Date): string {
  return typeof value === "string" ? value : value.toISOString();
}

export class InvalidInputError extends StoreError {
  constructor(message: string) {
    super("INVALID_INPUT", message);
  }
}

export function checkSeq(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidInputError(`${what} must be a non-negative integer, got ${value}`);
  }
}

export function checkTtl(ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0)
    throw new InvalidInputError(`lease ttl must be positive, got ${ttlMs}`);
}

export function checkLimit(limit: number | undefined): void {
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new InvalidInputError(`limit must be a non-negative integer, got ${limit}`);
  }
}

/**
 * The listing options both stores check alike: the limit, the text filter (lowercased here, so each store
 * compares with its own `lower`; `null` when there is none), and a by-activity cursor that must name a
 * real instant and cannot be mixed with the by-id `before`.
 */
export function listingFilters(options: ListSessionsOptions): {
  query: string | null;
  after: ActivityCursor | undefined;
} {
  checkLimit(options.limit);
  const { after } = options;
  if (after !== undefined) {
    if (options.order !== "activity")
      throw new InvalidInputError("a listing cursor (after) goes with order: activity");
    if (Number.isNaN(Date.parse(after.updatedAt)) || typeof after.id !== "string")
      throw new InvalidInputError(`not a listing cursor: ${JSON.stringify(after)}`);
  }
  if (options.order === "activity" && options.before !== undefined)
    throw new InvalidInputError("before pages the by-id order; the by-activity order pages with after");
  const query = options.query?.trim().toLowerCase();
  return { query: query ? query : null, after };
}

/** A new event as it goes into a row: everything decided except the seq. */
export type EncodedEvent = {
  type: EventType;
  at: string;
  turn: number | null;
  step: number | null;
  data: string;
};

export function encodeEvents(events: readonly NewEvent[], expectedSeq: number): EncodedEvent[] {
  checkSeq(expectedSeq, "expected seq");
  if (events.length === 0) throw new InvalidInputError("append needs at least one event");
  const now = isoNow();
  return events.map((e) => ({
    type: e.type,
    at: e.at ?? now,
    turn: e.turn ?? null,
    step: e.step ?? null,
    data: JSON.stringify(e.data),
  }));
}

/** One append as both stores write it, alone or in a group commit (statement-combiner.ts). */
export type PreparedAppend = {
  sessionId: string;
  expectedSeq: number;
  encoded: EncodedEvent[];
  /** Fencing: the owner that must hold the live session lease, if any. */
  owner: string | null;
  /** Inbox rows consumed with it (deduplicated). */
  claims: string[];
  /** Let go of the session lease once written (only with an owner). */
  release: boolean;
  /** The title the events name (the row's title follows), null if none. */
  title: string | null;
  /** Whether the events leave the turn open (null: they open or close none). */
  turnOpen: boolean | null;
  /** Asked for `disk` durability (the default), not only `commit`. */
  disk: boolean;
};

export function prepareAppend(
  sessionId: string,
  events: readonly NewEvent[],
  expectedSeq: number,
  options: AppendOptions,
): PreparedAppend {
  const encoded = encodeEvents(events, expectedSeq);
  const owner = options.leaseOwner ?? null;
  return {
    sessionId,
    expectedSeq,
    encoded,
    owner,
    claims: uniqueIds(options.claimInbox ?? []),
    release: options.releaseLease === true && owner !== null,
    title: titleAfter(events) ?? null,
    turnOpen: turnOpenAfter(encoded) ?? null,
    disk: options.durability !== "commit",
  };
}

/**
 * Whether the session's last turn is open after these events (a `turn/start` with no later
 * `turn/end`), or undefined when they open or close no turn (the stored flag stays as it is).
 */
export function turnOpenAfter(events: readonly { type: EventType }[]): boolean | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const type = events[i]!.type;
    if (type === "turn/start") return true;
    if (type === "turn/end") return false;
  }
  return undefined;
}

/**
 * The title the last `session/title` among these events names, or undefined when none does: the append
 * that stores such an event sets the session row's title with it (the row's title follows the log's).
 */
export function titleAfter(events: readonly NewEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === "session/title") return event.data.title;
  }
  return undefined;
}

/**
 * The events an append stored, as `read` will return them, built from what was given rather than parsed
 * back from the text just written: the loop appends every step and never reads the answer, so a parse of
 * every event's data each step would be wasted. `data` is the given object (the text stored is its JSON).
 */
export function appendedEvents(
  sessionId: string,
  expectedSeq: number,
  events: readonly NewEvent[],
  encoded: readonly EncodedEvent[],
): LogEvent[] {
  return encoded.map((e, i) => {
    const event: Record<string, unknown> = { sessionId, seq: expectedSeq + 1 + i, type: e.type, at: e.at };
    if (e.turn !== null) event.turn = e.turn;
    if (e.step !== null) event.step = e.step;
    event.data = events[i]!.data;
    return event as LogEvent;
  });
}

export type EventRecord = {
  session_id: string;
  seq: number;
  type: string;
  at: string;
  turn: number | null;
  step: number | null;
  data: string;
};

export function toEvent(row: EventRecord): LogEvent {
  const data: unknown = JSON.parse(row.data);
  const event: Record<string, unknown> = {
    sessionId: row.session_id,
    seq: row.seq,
    type: row.type,
    at: row.at,
  };
  if (row.turn !== null) event.turn = row.turn;
  if (row.step !== null) event.step = row.step;
  event.data = data;
  return event as LogEvent;
}

/** Columns of a session as either driver returns them (SQLite: text and integers; pg: Dates and booleans). */
export type SessionRecord = {
  id: string;
  parent_id: string | null;
  kind: string;
  title: string | null;
  status: string;
  archived: boolean | number;
  created_at: string | Date;
  updated_at: string | Date;
  last_seq: number;
  metadata: string;
};

export function toSession(row: SessionRecord): SessionRow {
  return {
    id: row.id,
    parentId: row.parent_id,
    kind: row.kind as SessionKind,
    title: row.title,
    status: row.status,
    archived: Boolean(row.archived),
    createdAt: isoOf(row.created_at),
    updatedAt: isoOf(row.updated_at),
    lastSeq: row.last_seq,
    metadata: parseObject(row.metadata),
  };
}

/** A new session's columns with the defaults applied: kind `main`, status `idle`, no title, no parent. */
export function newSessionValues(input: CreateSessionInput = {}) {
  return {
    id: input.id ?? newId(),
    parentId: input.parentId ?? null,
    kind: input.kind ?? ("main" satisfies SessionKind),
    title: input.title ?? null,
    status: input.status ?? "idle",
    metadata: JSON.stringify(input.metadata ?? {}),
  };
}

export type InboxRecord = {
  id: string;
  session_id: string;
  queue: string;
  mode: string;
  source: string;
  text: string;
  metadata: string;
  created_at: string | Date;
};

export function toInboxItem(row: InboxRecord): InboxItem {
  return {
    id: row.id,
    sessionId: row.session_id,
    queue: row.queue as InboxQueue,
    mode: row.mode as InboxMode,
    source: row.source as UserSource,
    text: row.text,
    createdAt: isoOf(row.created_at),
    metadata: parseObject(row.metadata),
  };
}

/**
 * L7 from another server: the `mode` of an inbox row that is a cancel request, not input.
 * Such a row opens no turn (the ready queue counts only follow-ups and steers), is never returned by
 * `pendingInbox` nor claimed into the log, so no model sees it; the driving server takes it
 * (`takeCancelRequests`) and aborts its turn.
 */
export const CANCEL_MODE = "cancel";

/** A cancel request's columns: its mode says what it is; the input columns hold nothing meaningful. */
/** The columns of one inbox row as written (input, or a cancel request with its own mode). */
export type InboxRowValues = {
  id: string;
  queue: string;
  mode: string;
  source: string;
  text: string;
  metadata: string;
};

export function cancelRequestValues(): InboxRowValues {
  return {
    id: newId(),
    queue: "next-step" satisfies InboxQueue,
    mode: CANCEL_MODE,
    source: "human" satisfies UserSource,
    text: "",
    metadata: "{}",
  };
}

export function newInboxValues(item: NewInboxItem): InboxRowValues {
  return {
    id: item.id ?? newId(),
    queue: item.queue,
    mode: item.mode,
    source: item.source,
    text: item.text,
    metadata: JSON.stringify(item.metadata ?? {}),
  };
}

export type BlobRecord = {
  id: string;
  session_id: string;
  bytes: number;
  metadata: string;
  created_at: string | Date;
};

export function toBlobRef(row: BlobRecord): BlobRef {
  return {
    id: row.id,
    sessionId: row.session_id,
    bytes: row.bytes,
    createdAt: isoOf(row.created_at),
    metadata: parseObject(row.metadata),
  };
}

export function blobBytes(content: Uint8Array | string): Buffer {
  return typeof content === "string"
    ? Buffer.from(content, "utf8")
    : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
}

/** Claimed ids without duplicates, in the caller's order. */
export function uniqueIds(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

function parseObject(text: string): Record<string, unknown> {
  const value: unknown = JSON.parse(text);
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
