/**
 * Hard links and the file tools: under workspace-write, `write` and `edit` refuse a file with
 * more than one link unless every link is found inside the workspace.
 *
 * Why: another name of the same inode may lie outside the workspace (a link made before the session, or by
 * anyone who could). `write` and `edit` replace a file by renaming a new one over its name (T11), so the
 * other names would keep the old content — but a tool that silently detaches a linked file, or a later
 * fallback that writes in place, must not be the way a change leaves the workspace. The rule is simple to
 * state: change a linked file only when all its names are the model's to change.
 *
 * Invariants:
 * - Links are looked for by walking the workspace (no symlink followed, the same device only) until all
 *   `nlink` names are found or `MAX_ENTRIES` entries were looked at; a file whose links could not all be
 *   found is refused, and the result says how many were found and why.
 * - `read-only` refuses every write before this; `danger-full-access` has no file boundary to keep.
 */
import type { Dirent, Stats } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { ToolExec } from "../types.js";
import { realPathOf } from "./sandbox-paths.js";

const MAX_ENTRIES = 20_000;

/** How many names of `target`'s inode lie under `root` (stops at `target.nlink` or the entry budget). */
async function linksUnder(root: string, target: Stats): Promise<{ found: number; complete: boolean }> {
  let found = 0;
  let budget = MAX_ENTRIES;
  const queue = [root];
  while (queue.length > 0) {
    const dir = queue.shift() as string;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (--budget < 0) return { found, complete: false };
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        queue.push(path);
        continue;
      }
      if (!entry.isFile()) continue;
      const info = await lstat(path).catch(() => undefined);
      if (info && info.ino === target.ino && info.dev === target.dev && ++found >= target.nlink)
        return { found, complete: true };
    }
  }
  return { found, complete: true };
}

/** Undefined when `real` may be replaced, else the refusal text. */
export async function hardLinkDenial(
  exec: ToolExec,
  shown: string,
  real: string,
): Promise<string | undefined> {
  if (exec.sandbox !== "workspace-write") return undefined;
  const info = await lstat(real).catch(() => undefined);
  if (!info?.isFile() || info.nlink <= 1) return undefined;
  const { found, complete } = await linksUnder(await realPathOf(exec.workspace), info);
  if (found >= info.nlink) return undefined;
  const searched = complete
    ? `only ${found} of them ${found === 1 ? "is" : "are"} inside the workspace`
    : `the workspace is too large to find all of them (${found} found in the first ${MAX_ENTRIES} entries)`;
  return `cannot write "${shown}": [sandbox: file access denied under workspace-write mode] — the file has ${info.nlink} hard links and ${searched}, so another name of it may lie outside the workspace; a file with links outside the workspace is not changed by the file tools`;
}
