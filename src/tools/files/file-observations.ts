/**
 * Read-before-write (T11, C18): which version of each file this agent has read.
 *
 * Invariants:
 * - Per agent, and in the log: each observation is told to `onRecord` (the tools plugin writes it as a
 *   `files/observed` event) and folded back with `apply` when any process opens the session, so a session
 *   moved to another server keeps what it has read. The check below still compares with the file as it is
 *   now: a file changed since (by anyone) is `stale` wherever the session runs.
 * - A version is the file's mtime (ns) and size from `stat` of the real path; any change since the read
 *   makes the observation stale. Writes and edits record the version they produced.
 */
import { stat } from "node:fs/promises";

export type FileVersion = { mtimeNs: bigint; size: bigint };

export type ObservationCheck = "ok" | "unread" | "stale" | "missing";

export class FileObservations {
  private readonly versions = new Map<string, FileVersion>();

  constructor(private readonly onRecord?: (key: string, version: FileVersion) => void) {}

  record(realPath: string, version: FileVersion): void {
    this.versions.set(realPath, version);
    this.onRecord?.(realPath, version);
  }

  /** An observation read back from the log (`files/observed`): remembered, not told again. */
  apply(key: string, version: FileVersion): void {
    this.versions.set(key, version);
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

  /** The version recorded for `key` (remote files are checked against their backend's stat). */
  seen(key: string): FileVersion | undefined {
    return this.versions.get(key);
  }
}

declare module "../types.js" {
  interface ToolServiceMap {
    fileObservations: FileObservations;
  }
}

declare module "../../log/events.js" {
  interface PluginEventDataMap {
    /** T11, C18: a file's version as a tool read or wrote it (`mtimeNs` and `size` as decimal strings). */
    "files/observed": { path: string; mtimeNs: string; size: string };
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
