/**
 * What a file or directory is now, for a cache kept across reads (the trust list, the plugin folders' listings,
 * read for every agent a server opens): one synchronous `stat`, and a cache entry is reused only while the
 * version is the same.
 *
 * Invariants:
 * - The version is the device, inode, size, mtime and ctime (nanoseconds). Writing or renaming an entry moves
 *   a file's or directory's mtime and ctime, replacing it moves its inode, and nothing can set a ctime back.
 * - File times are coarse: the kernel stamps them from a clock that advances by ticks, so two changes in one
 *   tick can leave the same version. So a path whose last change is under a second old is not `settled`, and a
 *   cache must not keep what it read from it (git's "racy" index entries, the same problem).
 */
import { type BigIntStats, statSync } from "node:fs";

export type FileVersion =
  | { kind: "absent" | "unreadable" }
  | { kind: "file" | "directory" | "other"; version: string; settled: boolean };

/** How recent a change must be for a path not to count as settled. */
const SETTLE_NS = 1_000_000_000n;

export function fileVersion(path: string): FileVersion {
  let stat: BigIntStats | undefined;
  try {
    stat = statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return { kind: "unreadable" };
  }
  if (!stat) return { kind: "absent" };
  const kind = stat.isFile() ? "file" : stat.isDirectory() ? "directory" : "other";
  // A ctime ahead of the clock (the clock was set back) is no more settled than a fresh one.
  const settled = BigInt(Date.now()) * 1_000_000n - stat.ctimeNs >= SETTLE_NS;
  return { kind, version: `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`, settled };
}

/** Whether two reads saw the same version of an existing path. */
export function sameVersion(a: FileVersion, b: FileVersion): boolean {
  return "version" in a && "version" in b && a.version === b.version;
}
