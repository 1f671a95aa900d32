/**
 * The file sandbox of the file tools (T17): the mode applied to resolved real paths.
 *
 * Invariants:
 * - Paths are resolved against the call's cwd, `..` collapsed, then every symlink resolved (for a path that
 *   does not exist yet, the deepest existing ancestor is resolved and the rest appended). The check is on
 *   that real path, so neither a symlink nor `..` leads out of the workspace.
 * - In every mode, never into a directory the command sandbox masks (masked-paths.ts: `$BDSH_HOME`).
 * - `read-only`: no writes. `workspace-write`: writes only under the workspace's real path, and never to
 *   its protected paths (protected-paths.ts: `.bdsh/` at any depth, git hooks and config: files the
 *   model writes there would run with more privilege later). `danger-full-access`: no other
 *   restriction. Reads are allowed in every mode but the
 *   masked directories.
 * - This is the policy check. Under workspace-write the write itself is enforced again, race-free, by
 *   contained-write.ts: a path swapped after this check is refused, not followed.
 * - A denial is `cannot write "<p>": [sandbox: file access denied under <mode> mode]`.
 */
import { realpath } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import type { ToolExec } from "../types.js";
import { isMasked, maskedRealPaths } from "./masked-paths.js";
import { isWithin } from "./path-within.js";
import { isProtected, protectedPaths } from "./protected-paths.js";

export function absolutePath(exec: ToolExec, path: string): string {
  return resolve(exec.cwd, path);
}

/** The real path of `path`, which need not exist yet. */
export async function realPathOf(path: string): Promise<string> {
  const rest: string[] = [];
  let current = resolve(path);
  for (;;) {
    try {
      const real = await realpath(current);
      return rest.length === 0 ? real : join(real, ...rest.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return resolve(path);
      rest.push(basename(current));
      current = parent;
    }
  }
}

export function sandboxDeniedText(path: string, exec: ToolExec): string {
  return `cannot write "${path}": [sandbox: file access denied under ${exec.sandbox} mode]`;
}

/** Undefined when `realPath` may be written under the call's sandbox mode, else the denial text. */
export async function writeDenial(
  exec: ToolExec,
  shownPath: string,
  realPath: string,
): Promise<string | undefined> {
  // Where bubblewrap hides a directory from commands, no tool may write either, in any mode: the user's
  // config and trust list live there, and a model that wrote them would set its own rules.
  if (isMasked(await maskedRealPaths(exec), realPath)) return sandboxDeniedText(shownPath, exec);
  if (exec.sandbox === "danger-full-access") return undefined;
  if (exec.sandbox === "read-only") return sandboxDeniedText(shownPath, exec);
  const root = await realPathOf(exec.workspace);
  if (!isWithin(root, realPath) || isProtected(protectedPaths(root), realPath))
    return sandboxDeniedText(shownPath, exec);
  return undefined;
}
