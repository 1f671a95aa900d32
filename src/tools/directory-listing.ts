/**
 * A directory's entry names, read again only after the directory changed: the plugin folders
 * (`$BDSH_HOME/plugins`, a project's `.bdsh/plugins`) are looked at by every agent a server opens and are
 * almost always absent or unchanged, so an asynchronous `readdir` per agent (and, for an absent folder,
 * an error object per agent) was most of what discovering them cost.
 *
 * The check is one synchronous `stat` of the directory (config/file-version.ts): adding, removing or
 * renaming an entry changes the directory's mtime and ctime, and replacing the directory changes its inode,
 * so a listing is reused only while its version is the same, and an absent directory is remembered as absent
 * only while it still is. File times are coarse, so a listing read within a second of the directory's last
 * change is not kept: two entries added in one clock tick leave one version. The check is exact, not a timer
 * or a file watch, so a plugin added just now is seen by the next agent.
 */
import { readdir } from "node:fs/promises";
import { type FileVersion, fileVersion, sameVersion } from "../config/file-version.js";

type Listing = { version: FileVersion; entries: readonly string[] };

const listings = new Map<string, Listing>();
/** Enough for every plugin folder of a server's workspaces; past it the oldest is forgotten. */
const MAX_LISTINGS = 256;

/** Whether two versions say the same: the same directory unchanged, or absent (unreadable, not a folder) both times. */
function unchanged(a: FileVersion, b: FileVersion): boolean {
  if (a.kind !== "directory" || b.kind !== "directory") return a.kind === b.kind;
  return sameVersion(a, b);
}

/** The names in `path`, unsorted as `readdir` gives them; `[]` when it is absent or unreadable. */
export async function listDirectory(path: string): Promise<readonly string[]> {
  const version = fileVersion(path);
  const known = listings.get(path);
  if (known && unchanged(known.version, version)) return known.entries;
  const entries = version.kind === "directory" ? await readdir(path).catch(() => [] as string[]) : [];
  // A change while reading moves the version on: the listing is kept only under the version it was read at,
  // and only once that version has settled.
  const settled = version.kind !== "directory" || version.settled;
  if (settled && unchanged(fileVersion(path), version)) {
    if (listings.size >= MAX_LISTINGS) listings.delete(listings.keys().next().value as string);
    listings.set(path, { version, entries });
  } else {
    listings.delete(path);
  }
  return entries;
}
