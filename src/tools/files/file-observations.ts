/**
 * Read-before-write (T11, C18): which version of each file this agent has read.
 *
 * Invariants:
 * - In memory only, per agent; not persisted and not replayed on resume (R2): after a resume, files must be
 *   read again before they are modified.
 * - A version is the file's mtime (ns) and size from `stat` of the real path; any change since the read
 *   makes the observation stale. Writes and edits record the version they produced.
 */
import { stat } from "node:fs/promises";

export type FileVersion = { mtimeNs: bigint; size: bigint };

export type ObservationCheck = "ok" | "unread" | "stale" | "missing";

export class FileObservations {
  private readonly versions = new Map<string, FileVersion>();

  record(realPath: string, version: FileVersion): void {
    this.versions.set(realPath, version);
  }

  async recordCurrent(realPath: string): Promise<void> {
    const version = await versionOf(realPath);
    if (version) this.record(realPath, version);
  }

  /** Whether `realPath` may be modified now: read, and unchanged since. */
  async check(realPath: string): Promise<ObservationCheck> {
    const current = await versionOf(realPath);
    if (!current) return "missing";
    const seen = this.versions.get(realPath);
    if (!seen) return "unread";
    return seen.mtimeNs === current.mtimeNs && seen.size === current.size ? "ok" : "stale";
  }

  /** The version recorded for `key` (issue 19: remote files are checked against their backend's stat). */
  seen(key: string): FileVersion | undefined {
    return this.versions.get(key);
  }

  forget(realPath: string): void {
    this.versions.delete(realPath);
  }
}

declare module "../types.js" {
  interface ToolServiceMap {
    fileObservations: FileObservations;
  }
}

export async function versionOf(path: string): Promise<FileVersion | undefined> {
  try {
    const info = await stat(path, { bigint: true });
    return info.isFile() ? { mtimeNs: info.mtimeNs, size: info.size } : undefined;
  } catch {
    return undefined;
  }
}
