/**
 * Where spilled output lives (C14–C16): store rows, not local files, addressed as `spill://<blobId>`.
 *
 * `BlobStore` is the two blob methods of the `Store` interface, so the loop passes its store as is;
 * `MemoryBlobStore` serves tests and store-less runs.
 */
import { randomUUID } from "node:crypto";
import type { Redactor } from "../../log/redact.js";
import type { BlobRef, Store } from "../../store/store.js";

export type BlobStore = Pick<Store, "putBlob" | "getBlob">;

declare module "../types.js" {
  interface ToolServiceMap {
    blobs: BlobStore;
  }
}

/** Every spilled blob is written with known secret values redacted. */
export function redactingBlobStore(inner: BlobStore, redactor: Redactor): BlobStore {
  if (!redactor.active) return inner;
  return {
    putBlob: (sessionId, content, metadata) =>
      inner.putBlob(
        sessionId,
        typeof content === "string" ? redactor.text(content) : redactor.bytes(content),
        metadata,
      ),
    getBlob: (id) => inner.getBlob(id),
  };
}

export const SPILL_SCHEME = "spill://";

export function spillLocator(blobId: string): string {
  return `${SPILL_SCHEME}${blobId}`;
}

/** The blob id of a `spill://` locator, or undefined for an ordinary path. */
export function parseSpillLocator(path: string): string | undefined {
  return path.startsWith(SPILL_SCHEME) ? path.slice(SPILL_SCHEME.length) : undefined;
}

export class MemoryBlobStore implements BlobStore {
  private readonly blobs = new Map<string, { ref: BlobRef; content: Buffer }>();

  async putBlob(
    sessionId: string,
    content: Uint8Array | string,
    metadata: Record<string, unknown> = {},
  ): Promise<BlobRef> {
    const buffer = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
    const ref: BlobRef = {
      id: randomUUID(),
      sessionId,
      bytes: buffer.length,
      createdAt: new Date().toISOString(),
      metadata,
    };
    this.blobs.set(ref.id, { ref, content: buffer });
    return ref;
  }

  async getBlob(id: string): Promise<{ ref: BlobRef; content: Buffer } | undefined> {
    return this.blobs.get(id);
  }
}
