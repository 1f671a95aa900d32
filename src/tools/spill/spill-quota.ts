/**
 * Spill quotas: how many bytes one tool result, and one session in all, may keep as blobs (C14 spills to
 * store rows; without a bound one step of large outputs grows the database by gigabytes).
 *
 * Invariants:
 * - A blob larger than `maxResultBytes` is stored as its head and its tail around a marker naming how many
 *   bytes were dropped and which setting dropped them; the ref's metadata says so too (`spillDropped`).
 * - A session's blobs never pass `maxSessionBytes`: a blob that would is cut to the room left, and once less
 *   than `MIN_ROOM_BYTES` is left `putBlob` throws `SpillQuotaError` (the caller keeps its inline preview and
 *   says the full text was not stored).
 * - The session's count is read from the store the first time this wrapper sees the session (a restart, or
 *   another server driving it before, counts what is already there), then kept here: the check and the
 *   reservation happen together, so parallel tool calls cannot both take the last room.
 */
import type { BlobRef, Store } from "../../store/store.js";
import type { BlobStore } from "./blob-store.js";

export type SpillQuota = { maxResultBytes: number; maxSessionBytes: number };

/** Below this much room a session stores no more blobs: a cut that small keeps nothing useful. */
export const MIN_ROOM_BYTES = 4096;

export class SpillQuotaError extends Error {
  constructor(readonly limit: number) {
    super(`this session's spill quota (spill.max_session_bytes = ${limit}) is used up`);
    this.name = "SpillQuotaError";
  }
}

type Dropped = { bytes: number; setting: "spill.max_result_bytes" | "spill.max_session_bytes" };

/** The store's blobs under the configured quotas. */
export function quotaBlobStoreFor(
  store: BlobStore & Pick<Store, "sessionBlobBytes">,
  config: { spill: { max_result_bytes: number; max_session_bytes: number } },
): BlobStore {
  return quotaBlobStore(store, (id) => store.sessionBlobBytes(id), {
    maxResultBytes: config.spill.max_result_bytes,
    maxSessionBytes: config.spill.max_session_bytes,
  });
}

export function quotaBlobStore(
  inner: BlobStore,
  countStored: (sessionId: string) => Promise<number>,
  quota: SpillQuota,
): BlobStore {
  const used = new Map<string, Promise<{ bytes: number }>>();
  const usage = (sessionId: string) => {
    let entry = used.get(sessionId);
    if (!entry) {
      entry = countStored(sessionId).then((bytes) => ({ bytes }));
      used.set(sessionId, entry);
      entry.catch(() => used.delete(sessionId));
    }
    return entry;
  };
  return {
    getBlob: (id) => inner.getBlob(id),
    async putBlob(sessionId, content, metadata = {}) {
      const counter = await usage(sessionId);
      const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
      const room = quota.maxSessionBytes - counter.bytes;
      if (room < Math.min(MIN_ROOM_BYTES, bytes.length)) throw new SpillQuotaError(quota.maxSessionBytes);
      const sessionBound = room < quota.maxResultBytes;
      const limit = Math.min(room, quota.maxResultBytes);
      const kept = bytes.length > limit ? keepEnds(bytes, limit, sessionBound) : undefined;
      const stored = kept?.content ?? bytes;
      counter.bytes += stored.length;
      try {
        return await inner.putBlob(
          sessionId,
          stored,
          kept ? { ...metadata, spillDropped: kept.dropped } : metadata,
        );
      } catch (error) {
        counter.bytes -= stored.length;
        throw error;
      }
    },
  };
}

/** `(… N bytes dropped by …)` for a ref the quota cut, for the caller's notice; undefined when whole. */
export function droppedNotice(ref: BlobRef): string | undefined {
  const dropped = ref.metadata.spillDropped as Dropped | undefined;
  if (!dropped) return undefined;
  return `The stored copy keeps the beginning and the end; ${dropped.bytes} bytes in the middle were dropped (${dropped.setting}).`;
}

function keepEnds(
  bytes: Buffer,
  limit: number,
  sessionBound: boolean,
): { content: Buffer; dropped: Dropped } {
  const setting = sessionBound ? "spill.max_session_bytes" : "spill.max_result_bytes";
  // The marker's own length is reserved first, so the stored blob never exceeds the limit.
  const probe = marker(bytes.length, setting);
  const budget = Math.max(0, limit - Buffer.byteLength(probe));
  const head = charBoundary(bytes, Math.ceil(budget / 2));
  const tail = charBoundaryFromEnd(bytes, Math.floor(budget / 2));
  const dropped = { bytes: bytes.length - head - tail, setting } as const;
  const content = Buffer.concat([
    bytes.subarray(0, head),
    Buffer.from(marker(dropped.bytes, setting)),
    bytes.subarray(bytes.length - tail),
  ]);
  return { content, dropped };
}

function marker(droppedBytes: number, setting: string): string {
  return `\n\n[... ${droppedBytes} bytes dropped here by the spill quota (${setting}) ...]\n\n`;
}

/** The largest cut at or below `at` that does not split a UTF-8 sequence. */
function charBoundary(bytes: Buffer, at: number): number {
  let end = Math.min(at, bytes.length);
  while (end > 0 && end < bytes.length && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return end;
}

/** How many bytes, at most `count`, a tail can take without starting inside a UTF-8 sequence. */
function charBoundaryFromEnd(bytes: Buffer, count: number): number {
  let take = Math.min(count, bytes.length);
  while (take > 0 && ((bytes[bytes.length - take] ?? 0) & 0xc0) === 0x80) take -= 1;
  return take;
}
