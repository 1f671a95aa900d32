/**
 * Workspace trust (as Codex's trusted projects and VS Code's workspace trust): the files a
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
 * - An entry's `accepted` maps each instruction file and skill a person accepted (by its name under the
 *   directory) to the sha256 of its content (./instruction-files.ts). An entry without it was written
 *   before instruction review: it accepts nothing until `bdsh trust --accept-instructions` (fail closed).
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { fileVersion } from "./file-version.js";
import {
  digestOf,
  INSTRUCTION_FILES,
  type ProjectFile,
  projectInstructionFiles,
  saveAcceptedCopies,
} from "./instruction-files.js";

export type TrustEntry = { path: string; trustedAt: string; accepted?: Record<string, string> };

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

/**
 * The trust list; throws TrustFileError when the file exists but is not a trust list. Every agent a server
 * opens asks (its project root, the project roots commands may write, the accepted instruction files), so
 * the parsed list is kept per file and read again only when the file's version moves, and always while its
 * last change is recent (./file-version.ts says why).
 */
export function readTrustList(home: string): TrustList {
  const path = trustFilePath(home);
  const now = fileVersion(path);
  if (!("version" in now)) return { version: 1, directories: [] };
  const known = parsedLists.get(path);
  if (known && now.settled && known.version === now.version) return copyOf(known.list);
  const list = parseTrustList(path);
  if (now.settled) parsedLists.set(path, { version: now.version, list });
  else parsedLists.delete(path);
  return copyOf(list);
}

/** The lists read, by file (a process has one home, tests a few). */
const parsedLists = new Map<string, { version: string; list: TrustList }>();

/** A copy the caller may change (adding an entry) without changing the list kept. */
function copyOf(list: TrustList): TrustList {
  return {
    version: 1,
    directories: list.directories.map((entry) => ({
      ...entry,
      ...(entry.accepted ? { accepted: { ...entry.accepted } } : {}),
    })),
  };
}

function parseTrustList(path: string): TrustList {
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
    const accepted = acceptedOf((entry as { accepted?: unknown }).accepted);
    entries.push({ path, trustedAt: typeof at === "string" ? at : "", ...(accepted ? { accepted } : {}) });
  }
  return { version: 1, directories: entries };
}

/** An entry's accepted digests; a malformed record accepts nothing rather than everything. */
function acceptedOf(value: unknown): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  const accepted: Record<string, string> = {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) return accepted;
  for (const [name, digest] of Object.entries(value)) {
    if (typeof digest === "string" && /^[0-9a-f]{64}$/.test(digest)) accepted[name] = digest;
  }
  return accepted;
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

function digestsOf(files: readonly ProjectFile[]): Record<string, string> {
  return Object.fromEntries(files.map((file) => [file.name, digestOf(file.content)]));
}

/**
 * Records `dir` (by real path) as trusted, accepting `files` (default: the instruction files and skills it
 * carries now, which the person trusting it was shown); returns that path. An already trusted directory is
 * left as it is: changed files are accepted with `acceptInstructions`.
 */
export function trustDirectory(
  home: string,
  dir: string,
  options: { now?: Date; files?: readonly ProjectFile[] } = {},
): string {
  const path = realDirectory(dir);
  const list = readTrustList(home);
  if (!list.directories.some((entry) => entry.path === path)) {
    const files = options.files ?? projectInstructionFiles(path);
    saveAcceptedCopies(home, files);
    list.directories.push({
      path,
      trustedAt: (options.now ?? new Date()).toISOString(),
      accepted: digestsOf(files),
    });
    writeTrustList(home, list);
  }
  return path;
}

/**
 * Accepts `files` for the trusted directory `root`: their digests join the entry's accepted ones, and
 * names whose files are gone are dropped. Throws when `root` is not in the list.
 */
export function acceptInstructions(
  home: string,
  root: string,
  files: readonly ProjectFile[],
  present: readonly string[],
): void {
  const list = readTrustList(home);
  const entry = list.directories.find((e) => e.path === root);
  if (!entry)
    throw new TrustFileError(trustFilePath(home), `${root} is not trusted (run \`bdsh trust\` first)`);
  saveAcceptedCopies(home, files);
  const kept = Object.entries(entry.accepted ?? {}).filter(([name]) => present.includes(name));
  entry.accepted = { ...Object.fromEntries(kept), ...digestsOf(files) };
  writeTrustList(home, list);
}

/** The accepted digests of the trusted directory `root`; undefined for an entry from before review. */
export function acceptedDigests(home: string, root: string): Record<string, string> | undefined {
  try {
    return readTrustList(home).directories.find((e) => e.path === root)?.accepted;
  } catch {
    return {};
  }
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
  for (const name of INSTRUCTION_FILES) {
    if (existsSync(join(dir, name))) found.push(name);
  }
  return found;
}
