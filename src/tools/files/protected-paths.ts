/**
 * The paths under a writable workspace that stay read-only (issue 14 finding 1; Codex's "limited git
 * writes"): what would make the harness or git run code the model wrote.
 *
 * One computation for both enforcers: the file tools refuse writes there (sandbox-paths.ts) and the
 * bubblewrap mount binds them read-only (bubblewrap.ts).
 *
 * Invariants:
 * - Always protected: `<workspace>/.bdsh` (project config, plugins, skills: loaded outside the sandbox), and
 *   the `.bdsh` of every trusted project root inside the workspace (`projectRoots`: what a later run started
 *   there would load). `isProtected` goes further: any path with a `.bdsh` component below the workspace is
 *   protected, at every depth, whether that directory exists or not.
 * - For the workspace's `.git`: a directory is the gitdir; a file `gitdir: <path>` (worktree, submodule) is
 *   resolved (relative to the workspace) to the real gitdir, and a `commondir` file in it to the common
 *   gitdir. For each gitdir, and for the submodule gitdirs under `<common>/modules` (bounded walk): `hooks`,
 *   `config` and `config.worktree` are protected. A `.git` pointer file is itself protected (rewriting it
 *   would point git at a gitdir the model wrote).
 * - Every path is a real path (symlinks resolved), so a protected path cannot be reached under another
 *   name; paths that do not exist are listed too (`exists: false`), so they cannot be created either.
 * - The rest of the gitdir (objects, refs, index, logs) stays writable: `git add` and `git commit` work.
 */
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";

export type ProtectedPath = { path: string; kind: "dir" | "file"; exists: boolean };

export type ProtectedPaths = {
  /** Real path of the workspace. */
  workspace: string;
  /** Read-only paths, deduplicated, shallowest first. */
  paths: ProtectedPath[];
  /** Real gitdirs found (the workspace's, its common dir, submodules). */
  gitdirs: string[];
};

const MAX_SUBMODULE_GITDIRS = 64;

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function kindOf(path: string): "dir" | "file" | undefined {
  try {
    return statSync(path).isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

/** The gitdir a `.git` entry names: the directory itself, or the target of a `gitdir:` pointer file. */
function gitdirOf(dotGit: string, base: string): string | undefined {
  const kind = kindOf(dotGit);
  if (kind === "dir") return real(dotGit);
  if (kind !== "file") return undefined;
  let text: string;
  try {
    text = readFileSync(dotGit, "utf8").slice(0, 4096);
  } catch {
    return undefined;
  }
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!match) return undefined;
  return real(isAbsolute(match[1]!) ? match[1]! : resolve(base, match[1]!));
}

function commondirOf(gitdir: string): string | undefined {
  try {
    const text = readFileSync(join(gitdir, "commondir"), "utf8").trim();
    return text === "" ? undefined : real(isAbsolute(text) ? text : resolve(gitdir, text));
  } catch {
    return undefined;
  }
}

/** Submodule gitdirs under `<common>/modules`, nested ones included (a gitdir has `HEAD`). */
function submoduleGitdirs(common: string): string[] {
  const found: string[] = [];
  const queue = [join(common, "modules")];
  while (queue.length > 0 && found.length < MAX_SUBMODULE_GITDIRS) {
    const dir = queue.shift() as string;
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      continue;
    }
    if (entries.includes("HEAD") && entries.includes("config")) {
      found.push(real(dir));
      queue.push(join(dir, "modules"));
      continue;
    }
    for (const entry of entries) {
      const child = join(dir, entry);
      if (lstatSync(child, { throwIfNoEntry: false })?.isDirectory()) queue.push(child);
    }
  }
  return found;
}

export type ProtectedPathsOptions = {
  /** Trusted project directories (`$BDSH_HOME/trusted.json`); those inside the workspace get `.bdsh`. */
  projectRoots?: readonly string[];
};

const below = (root: string, path: string) => {
  const inside = relative(root, path);
  return inside !== "" && inside.split(sep)[0] !== ".." && !isAbsolute(inside);
};

export function protectedPaths(workspace: string, options: ProtectedPathsOptions = {}): ProtectedPaths {
  const root = real(workspace);
  const entries: ProtectedPath[] = [];
  const add = (path: string, kind: "dir" | "file") => {
    const actual = kindOf(path);
    entries.push({ path: real(path), kind: actual ?? kind, exists: actual !== undefined });
  };
  add(join(root, ".bdsh"), "dir");
  for (const project of options.projectRoots ?? []) {
    const dir = real(project);
    if (below(root, dir)) add(join(dir, ".bdsh"), "dir");
  }

  const dotGit = join(root, ".git");
  const gitdirs: string[] = [];
  const gitdir = gitdirOf(dotGit, root);
  if (gitdir) {
    if (kindOf(dotGit) === "file") add(dotGit, "file");
    gitdirs.push(gitdir);
    const common = commondirOf(gitdir);
    if (common) gitdirs.push(common);
    gitdirs.push(...submoduleGitdirs(common ?? gitdir));
  }
  for (const dir of gitdirs) {
    add(join(dir, "hooks"), "dir");
    add(join(dir, "config"), "file");
    add(join(dir, "config.worktree"), "file");
  }
  const unique = new Map<string, ProtectedPath>();
  for (const entry of entries) if (!unique.has(entry.path)) unique.set(entry.path, entry);
  const paths = [...unique.values()].sort((a, b) => a.path.length - b.path.length);
  return { workspace: root, paths, gitdirs: [...new Set(gitdirs)] };
}

/**
 * Whether the real path `path` is a protected path, lies under a protected directory, or has a `.bdsh`
 * component anywhere below the workspace.
 */
export function isProtected(paths: ProtectedPaths, path: string): boolean {
  if (below(paths.workspace, path) && relative(paths.workspace, path).split(sep).includes(".bdsh"))
    return true;
  return paths.paths.some((entry) => {
    const inside = relative(entry.path, path);
    return inside === "" || (entry.kind === "dir" && inside.split(sep)[0] !== ".." && !isAbsolute(inside));
  });
}
