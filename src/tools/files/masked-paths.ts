/**
 * The harness's own files (`$BDSH_HOME`: the database, the user's config, the trust list, tokens), which
 * bubblewrap hides from every command (bubblewrap.ts), are hidden from the file tools as well: those
 * run in the harness process, outside bubblewrap, so they would otherwise read what commands cannot.
 *
 * Invariants:
 * - One list for both enforcers: the tools plugin registers `maskedPaths` from the same `home` it gives the
 *   terminal to mask.
 * - In every sandbox mode and wherever the directory lies (inside the workspace too): `write` and `edit`
 *   never create or change anything there, `read` (and `read_image`) never read it, and `grep`/`glob` drop
 *   every path there from their results and refuse to search inside it.
 * - Compared by real path (symlinks resolved on both sides), so a symlink into it is refused as well.
 */
import { realpath } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import type { ToolExec } from "../types.js";
import { isWithin } from "./path-within.js";

declare module "../types.js" {
  interface ToolServiceMap {
    /** Directories hidden from the file tools, as from commands (`$BDSH_HOME`). */
    maskedPaths: readonly string[];
  }
}

/** What is hidden: the masked directories, and the workspace when it lies inside one (bound back in). */
export type Masked = { dirs: readonly string[]; workspace?: string };

/** The real paths of the masked directories of this agent, and its workspace's. */
export async function maskedRealPaths(exec: ToolExec): Promise<Masked> {
  const masked = exec.services.get("maskedPaths") ?? [];
  const reals = await Promise.all(masked.map((path) => realpath(path).catch(() => resolve(path))));
  const workspace = await realpath(exec.workspace).catch(() => resolve(exec.workspace));
  return { dirs: [...new Set([...masked.map((path) => resolve(path)), ...reals])], workspace };
}

/**
 * Whether the real path `path` is hidden: inside a masked directory, unless it lies in the workspace and
 * the workspace lies in that directory (bubblewrap binds such a workspace back in; bubblewrap.ts).
 */
export function isMasked(masked: Masked, path: string): boolean {
  const { workspace } = masked;
  return masked.dirs.some(
    (dir) => isWithin(dir, path) && !(workspace && isWithin(dir, workspace) && isWithin(workspace, path)),
  );
}

/**
 * The masked directories inside a search root, spelled under `shown` (the root as the search names it,
 * whose real path is `real`), so the paths a search prints can be dropped by prefix.
 */
export function shownMaskedDirectories(shown: string, real: string, masked: Masked): Masked {
  const inside = masked.dirs.filter((dir) => isWithin(real, dir));
  const dirs = [...new Set([...inside, ...inside.map((dir) => join(shown, relative(real, dir)))])];
  return masked.workspace ? { dirs, workspace: masked.workspace } : { dirs };
}

export function hiddenReadText(path: string): string {
  return `cannot read "${path}": [sandbox: the harness's own directory is hidden from tools and commands]`;
}
