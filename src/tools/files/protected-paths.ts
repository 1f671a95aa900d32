/**
 * The paths under a writable workspace that stay read-only (Codex's "limited git
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
 * - Every git control path in the workspace, at any depth (git-control.ts `findGitDirs`: `.git` directories
 *   and pointer files, their `commondir`, submodule and worktree gitdirs, bare repositories): for each
 *   gitdir, `hooks`, `config`, `config.worktree`, `info/attributes`, and `commondir`/`gitdir` where they
 *   exist (an empty `commondir` makes git fail, so a missing one cannot be held by a placeholder: the
 *   after-command repair, src/guards/git-repair/, handles one that appears). A `.git` pointer file is
 *   itself protected (rewriting it would point git at a gitdir the model wrote); a `.git` directory is
 *   listed in `pins` (bubblewrap binds it onto itself, so it cannot be renamed away and replaced).
 *   `isProtected` also refuses, lexically, any control path under a `.git` component at any depth
 *   (`isGitControlPath`), whether it exists or not.
 * - Every path is a real path (symlinks resolved), so a protected path cannot be reached under another
 *   name; paths that do not exist are listed too (`exists: false`), so they cannot be created either.
 * - The rest of the gitdir (objects, refs, index, logs) stays writable: `git add` and `git commit` work.
 */
import { isAbsolute, join, relative, sep } from "node:path";
import { findGitDirs, isGitControlPath, kindOf, real } from "./git-control.js";

export type ProtectedPath = { path: string; kind: "dir" | "file"; exists: boolean };

export type ProtectedPaths = {
  /** Real path of the workspace. */
  workspace: string;
  /** Read-only paths, deduplicated, shallowest first. */
  paths: ProtectedPath[];
  /** Real gitdirs found (the workspace's, its common dir, submodules, nested and bare repositories). */
  gitdirs: string[];
  /** `.git` directories under the workspace, bound onto themselves so they cannot be replaced. */
  pins: string[];
  /** False when the discovery walk hit its bound (git-control.ts): some `.git` may be unlisted. */
  complete: boolean;
};

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

  const scan = findGitDirs(root);
  const pins: string[] = [];
  for (const dotGit of scan.dotGits) {
    const kind = kindOf(dotGit);
    if (kind === "file") add(dotGit, "file");
    else if (kind === "dir") pins.push(real(dotGit));
  }
  for (const { path: dir } of scan.gitdirs) {
    add(join(dir, "hooks"), "dir");
    add(join(dir, "config"), "file");
    add(join(dir, "config.worktree"), "file");
    if (kindOf(join(dir, "info")) === "dir") add(join(dir, "info", "attributes"), "file");
    for (const pointer of ["commondir", "gitdir"])
      if (kindOf(join(dir, pointer)) === "file") add(join(dir, pointer), "file");
  }
  const unique = new Map<string, ProtectedPath>();
  for (const entry of entries) if (!unique.has(entry.path)) unique.set(entry.path, entry);
  const paths = [...unique.values()].sort((a, b) => a.path.length - b.path.length);
  return {
    workspace: root,
    paths,
    gitdirs: [...new Set(scan.gitdirs.map((g) => g.path))],
    pins: [...new Set(pins)],
    complete: scan.complete,
  };
}

/**
 * Whether the real path `path` is a protected path, lies under a protected directory, or has a `.bdsh`
 * component or a git control path (`isGitControlPath`) anywhere below the workspace.
 */
export function isProtected(paths: ProtectedPaths, path: string): boolean {
  if (below(paths.workspace, path)) {
    const components = relative(paths.workspace, path).split(sep);
    if (components.includes(".bdsh") || isGitControlPath(components)) return true;
  }
  return paths.paths.some((entry) => {
    const inside = relative(entry.path, path);
    return inside === "" || (entry.kind === "dir" && inside.split(sep)[0] !== ".." && !isAbsolute(inside));
  });
}
