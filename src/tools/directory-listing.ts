/**
 * A directory's entry names, read again only after the directory changed: the plugin folders
 * (`$BDSH_HOME/plugins`, a project's `.bdsh/plugins`) are looked at by every agent a server opens and are
 * almost always absent or unchanged, so an asynchronous `readdir` per agent (and, for an absent folder,
 * an error object per agent) was most of what discovering them cost.
 *
 * The check is one synchronous `stat` of the directory: adding, removing or renaming an entry changes the
 * directory's mtime (nanoseconds) and replacing the directory changes its inode, so a listing is reused
 * only while both are the same, and an absent directory is remembered as absent only while it still is.
 * The check is exact, not a timer or a file watch, so a plugin added just now is seen by the next agent.
 */
import { type BigIntStats, statSync } from "node:fs";
import { readdir } from "node:fs/promises";

type Listing = { version: string; entries: readonly string[] };

const listings = new Map<string, Listing>();
/** Enough for every plugin folder of a server's workspaces; past it the oldest is forgotten. */
const MAX_LISTINGS = 256;

function versionOf(path: string): string {
  let stat: BigIntStats | undefined;
  try {
    stat = statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return "unreadable";
  }
  if (!stat) return "absent";
  return stat.isDirectory() ? `${stat.dev}:${stat.ino}:${stat.mtimeNs}:${stat.ctimeNs}` : "not-a-directory";
}

/** The names in `path`, unsorted as `readdir` gives them; `[]` when it is absent or unreadable. */
export async function listDirectory(path: string): Promise<readonly string[]> {
  const version = versionOf(path);
  const known = listings.get(path);
  if (known && known.version === version) return known.entries;
  const entries = version.includes(":") ? await readdir(path).catch(() => [] as string[]) : [];
  // A change while reading moves the version on: the listing is kept only under the version it was read at.
  if (versionOf(path) === version) {
    if (listings.size >= MAX_LISTINGS) listings.delete(listings.keys().next().value as string);
    listings.set(path, { version, entries });
  }
  return entries;
}
