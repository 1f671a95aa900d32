/**
 * The text of the small files every agent of a process reads when it opens (instruction files, `SKILL.md`),
 * read from disk once and again only when the file changed.
 *
 * - Never stale by more than what `stat` can tell: every call stats the file, and a different inode, size,
 *   modification or change time reads it again. A missing file (or not a regular file) is `undefined`,
 *   found by a `stat` that builds no error object.
 * - What is derived from a text (a parsed skill) may be kept beside it with `derived`: it is dropped with
 *   the text when the file changes.
 * - Bounded: past `MAX_FILES` paths the cache starts over.
 */
import { readFileSync, type Stats, statSync } from "node:fs";

const MAX_FILES = 1_024;

type Snapshot = { version: string; text: string; derived: Map<string, unknown> };
const snapshots = new Map<string, Snapshot>();

function versionOf(stat: Stats): string {
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
}

function snapshot(path: string): Snapshot | undefined {
  let stat: Stats | undefined;
  try {
    stat = statSync(path, { throwIfNoEntry: false });
  } catch {
    stat = undefined; // a path through a file, or unreadable: no file
  }
  if (!stat?.isFile()) {
    snapshots.delete(path);
    return undefined;
  }
  const version = versionOf(stat);
  const known = snapshots.get(path);
  if (known?.version === version) return known;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    snapshots.delete(path);
    return undefined;
  }
  if (snapshots.size >= MAX_FILES) snapshots.clear();
  const fresh = { version, text, derived: new Map<string, unknown>() };
  snapshots.set(path, fresh);
  return fresh;
}

/** The file's text, or undefined when it is not a readable regular file. */
export function fileText(path: string): string | undefined {
  return snapshot(path)?.text;
}

/** `make(text)` for the file's current text, computed once per version of the file and `kind`. */
export function derived<T>(
  path: string,
  kind: string,
  make: (text: string) => T,
): { text: string; value: T } | undefined {
  const current = snapshot(path);
  if (!current) return undefined;
  if (!current.derived.has(kind)) current.derived.set(kind, make(current.text));
  return { text: current.text, value: current.derived.get(kind) as T };
}
