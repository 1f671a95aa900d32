/**
 * The instruction files and skills a trusted project carries, and their digests (SECURITY.md row 1d).
 *
 * A model in a trusted workspace can write `AGENTS.md` (and, where its sandbox allows, a skill): if the next
 * run obeyed the file, the model would have raised its own privileges. So a person accepts each file's
 * content (`bdsh trust`, `bdsh trust --accept-instructions`, the question `bdsh chat` asks) and the trust
 * record keeps its sha256; the loaders read a file only when its digest is the accepted one.
 *
 * Invariants:
 * - Files are named by their path relative to the trusted root, with `/` between parts, so a record
 *   survives a moved checkout and never names a file above the root.
 * - The walk is bounded (`MAX_WALK_ENTRIES`) and skips `.git`, `node_modules` and dot directories other
 *   than the root's `.bdsh/skills`; a file it misses is simply not accepted (fail closed).
 * - The accepted content is copied to `$BDSH_HOME/accepted-instructions/<sha256>`, which the sandbox cannot
 *   see, so a later review can show a diff against what the person read.
 */
import { createHash } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";

/** The names the instruction loader reads in each directory (src/context/instructions.ts). */
export const INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md", "AGENTS.local.md", "CLAUDE.local.md"] as const;

/** How to accept new or changed files: every warning names it. */
export const ACCEPT_COMMAND = "bdsh trust --accept-instructions";

const MAX_WALK_ENTRIES = 20_000;
const SKIPPED_DIRECTORIES = new Set([".git", "node_modules"]);

export type ReviewedKind = "instructions" | "skill";

/** A file as read now: `name` is its path relative to the trusted root. */
export type ProjectFile = { name: string; path: string; kind: ReviewedKind; content: string };

export function digestOf(content: string): string {
  return createHash("sha256").update(content, "utf8").digest("hex");
}

/** `path` relative to `root` with `/` separators, or undefined when it is not below `root`. */
export function nameUnder(root: string, path: string): string | undefined {
  const rel = relative(root, resolve(path));
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return rel.split(sep).join("/");
}

function readText(path: string): string | undefined {
  try {
    return statSync(path).isFile() ? readFileSync(path, "utf8") : undefined;
  } catch {
    return undefined;
  }
}

function listDirectory(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** The skill files of the project: `<root>/.bdsh/skills/<folder>/SKILL.md`. */
function skillFiles(root: string): ProjectFile[] {
  const skills = join(root, ".bdsh", "skills");
  const found: ProjectFile[] = [];
  for (const entry of listDirectory(skills)) {
    const path = join(skills, entry, "SKILL.md");
    const content = readText(path);
    if (content !== undefined)
      found.push({ name: `.bdsh/skills/${entry}/SKILL.md`, path, kind: "skill", content });
  }
  return found;
}

/** Instruction files in `dir` that the loader would read (it skips empty ones). */
function instructionFilesIn(root: string, dir: string): ProjectFile[] {
  const found: ProjectFile[] = [];
  for (const file of INSTRUCTION_FILES) {
    const path = join(dir, file);
    const content = readText(path);
    const name = nameUnder(root, path);
    if (content?.trim() && name) found.push({ name, path, kind: "instructions", content });
  }
  return found;
}

/**
 * Every instruction file below `root` (a bounded walk) and in each directory from `root` down to `cwd`
 * (which the walk may have skipped), then the project's skills.
 */
export function projectInstructionFiles(top: string, cwd?: string): ProjectFile[] {
  const root = realOrResolved(top);
  const byName = new Map<string, ProjectFile>();
  const add = (files: ProjectFile[]) => {
    for (const file of files) if (!byName.has(file.name)) byName.set(file.name, file);
  };
  const queue = [root];
  let seen = 0;
  while (queue.length > 0 && seen < MAX_WALK_ENTRIES) {
    const dir = queue.shift()!;
    add(instructionFilesIn(root, dir));
    for (const entry of listDirectory(dir)) {
      if (++seen >= MAX_WALK_ENTRIES) break;
      if (SKIPPED_DIRECTORIES.has(entry) || entry.startsWith(".")) continue;
      const path = join(dir, entry);
      // lstat: a symlinked directory is not walked (it may lead anywhere, or loop).
      if (lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) queue.push(path);
    }
  }
  if (cwd) {
    const rel = nameUnder(root, realOrResolved(cwd));
    let dir = root;
    for (const part of rel ? rel.split("/") : []) {
      dir = join(dir, part);
      add(instructionFilesIn(root, dir));
    }
  }
  return [...byName.values(), ...skillFiles(root)];
}

function realOrResolved(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}

/** Where accepted contents are kept, by digest, for the next review's diff. */
export function acceptedCopyDirectory(home: string): string {
  return join(home, "accepted-instructions");
}

export function saveAcceptedCopies(home: string, files: readonly ProjectFile[]): void {
  const dir = acceptedCopyDirectory(home);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const file of files) writeFileSync(join(dir, digestOf(file.content)), file.content, { mode: 0o600 });
}

/** The accepted content with this digest, when a copy was kept. */
export function acceptedCopy(home: string, digest: string): string | undefined {
  if (!/^[0-9a-f]{64}$/.test(digest)) return undefined;
  return readText(join(acceptedCopyDirectory(home), digest));
}
