/**
 * Workspace trust (issue 14, as Codex's trusted projects and VS Code's workspace trust): the files a
 * project carries — `./.bdsh/config.yaml`, `./.bdsh/plugins`, `./.bdsh/skills` and its instruction files
 * (`AGENTS.md`, …) — are untrusted until the user trusts the directory.
 *
 * Invariants:
 * - The trust list lives in `$BDSH_HOME/trusted.json` (mode 0600), which the sandbox cannot see or write;
 *   nothing inside a workspace can make it trusted.
 * - Directories are compared by real path: a symlink to a trusted directory is trusted, a symlink from a
 *   trusted directory to elsewhere is not. A trusted directory trusts everything below it.
 * - An unreadable or malformed list trusts nothing (fail closed) and is never silently rewritten: adding to
 *   it refuses until the user repairs the file.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";

export type TrustEntry = { path: string; trustedAt: string };

export type TrustList = { version: 1; directories: TrustEntry[] };

export class TrustFileError extends Error {
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
    this.name = "TrustFileError";
  }
}

export function trustFilePath(home: string): string {
  return join(home, "trusted.json");
}

/** The real path of a directory, or its absolute path when it cannot be resolved. */
export function realDirectory(dir: string): string {
  try {
    return realpathSync(resolve(dir));
  } catch {
    return resolve(dir);
  }
}

/** The trust list; throws TrustFileError when the file exists but is not a trust list. */
export function readTrustList(home: string): TrustList {
  const path = trustFilePath(home);
  if (!existsSync(path)) return { version: 1, directories: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new TrustFileError(path, `not readable as JSON (${(error as Error).message})`);
  }
  const directories = (parsed as { directories?: unknown } | null)?.directories;
  if (!Array.isArray(directories)) throw new TrustFileError(path, `expected {"directories": [...]}`);
  const entries: TrustEntry[] = [];
  for (const entry of directories) {
    const path = (entry as { path?: unknown } | null)?.path;
    if (typeof path !== "string" || !isAbsolute(path)) continue;
    const at = (entry as { trustedAt?: unknown }).trustedAt;
    entries.push({ path, trustedAt: typeof at === "string" ? at : "" });
  }
  return { version: 1, directories: entries };
}

/**
 * The trusted directory covering `dir` (itself or an ancestor), if any; of several, the nearest, whose
 * `.bdsh/` is the project's. Fails closed on a bad list.
 */
export function trustedRoot(home: string, dir: string): string | undefined {
  let list: TrustList;
  try {
    list = readTrustList(home);
  } catch {
    return undefined;
  }
  const real = realDirectory(dir);
  let nearest: string | undefined;
  for (const entry of list.directories) {
    const inside = relative(entry.path, real);
    if (inside !== "" && (inside.startsWith("..") || isAbsolute(inside))) continue;
    if (nearest === undefined || entry.path.length > nearest.length) nearest = entry.path;
  }
  return nearest;
}

/** Every trusted directory (real paths); none when the list is unreadable. */
export function trustedDirectories(home: string): string[] {
  try {
    return readTrustList(home).directories.map((entry) => entry.path);
  } catch {
    return [];
  }
}

export function isTrusted(home: string, dir: string): boolean {
  return trustedRoot(home, dir) !== undefined;
}

function writeTrustList(home: string, list: TrustList): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const path = trustFilePath(home);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(list, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

/** Records `dir` (by real path) as trusted; returns that path. */
export function trustDirectory(home: string, dir: string, now: Date = new Date()): string {
  const path = realDirectory(dir);
  const list = readTrustList(home);
  if (!list.directories.some((entry) => entry.path === path)) {
    list.directories.push({ path, trustedAt: now.toISOString() });
    writeTrustList(home, list);
  }
  return path;
}

/** Removes `dir` from the list; returns whether it was there. */
export function revokeTrust(home: string, dir: string): boolean {
  const path = realDirectory(dir);
  const list = readTrustList(home);
  const kept = list.directories.filter((entry) => entry.path !== path && entry.path !== resolve(dir));
  if (kept.length === list.directories.length) return false;
  writeTrustList(home, { version: 1, directories: kept });
  return true;
}

/** What a project directory carries that only loads once it is trusted (doctor, the chat prompt). */
export function projectFiles(dir: string): string[] {
  const found: string[] = [];
  for (const name of [".bdsh/config.yaml", ".bdsh/plugins", ".bdsh/skills"]) {
    if (existsSync(join(dir, name))) found.push(name);
  }
  for (const name of ["AGENTS.md", "CLAUDE.md", "AGENTS.local.md", "CLAUDE.local.md"]) {
    if (existsSync(join(dir, name))) found.push(name);
  }
  return found;
}
