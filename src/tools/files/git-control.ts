/**
 * Git's control paths and the settings that make git run a program (SECURITY.md rows 10g–10k: code ran on the
 * user's next `git status` through an embedded repository, a redirected `commondir` and a fresh `git init`).
 *
 * One place for what the sandbox, the file tools, the dangerous-command detector and the after-command
 * repair (src/guards/git-repair/) all need to agree on:
 * - `findGitDirs(workspace)`: every gitdir in the workspace, at any depth — `.git` directories, `.git`
 *   pointer files resolved (`gitdir:`), their `commondir`, `modules/` and `worktrees/` below them, and bare
 *   repositories (a directory holding `HEAD`, `objects` and `refs`). The walk never follows a symlink and
 *   never enters a `.git` directory (only its `modules/` and `worktrees/`) nor a bare repository's `objects`. Its bound: `maxEntries` directory entries (default 250,000); the
 *   big dependency trees (`node_modules`, `.venv`, `target`, …) are walked last, so the bound, if reached,
 *   cuts them and not the sources; `complete: false` says it was reached.
 * - `isGitControlPath(relative)`: lexically, a path whose components reach a control file of a `.git` at
 *   any depth (`.git` itself, `hooks/`, `config`, `config.worktree`, `commondir`, `gitdir`,
 *   `info/attributes`). The rest of a gitdir (objects, refs, index, `info/exclude`) is not a control path.
 * - `isProgramSetting(key)`: a git setting whose value git runs, or that points git at more settings.
 */
import { type Dirent, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

/** The files of a gitdir that decide which programs git runs (bound read-only, refused to the file tools). */
export const GITDIR_CONTROL_FILES = ["config", "config.worktree", "commondir", "gitdir"] as const;

/**
 * Git settings whose value is a program git runs (through a shell for most), or a file or rule that brings
 * in more settings (`include.*`, `includeIf.*`). `alias.*` whatever its value: a non-`!` alias can still
 * carry `-c core.pager=…`.
 */
const PROGRAM_SETTING =
  /^(?:core\.(?:pager|sshcommand|editor|fsmonitor|hookspath|askpass|gitproxy)|alias\..+|pager\..+|diff\.external|diff\..+\.(?:command|textconv)|difftool\..+\.cmd|mergetool\..+\.cmd|credential(?:\..+)?\.helper|sequence\.editor|gpg(?:\..+)?\.program|filter\..+\.(?:clean|smudge|process)|merge\..+\.driver|uploadpack\.packobjectshook|protocol\..+\.allow|include\..+|includeif\..+|ssh\.variant|remote\..+\.(?:uploadpack|receivepack|vcs)|web\.browser|browser\..+\.(?:cmd|path)|man\..+\.(?:cmd|path)|sendemail\.(?:.+\.)?(?:smtpserver|tocmd|cccmd)|submodule\..+\.update|init\.templatedir)$/i;

/**
 * Whether setting `key` (with `value`, when known) makes git run a program. `submodule.<name>.update` runs
 * one only as `!command`; its other values (`checkout`, `rebase`, `merge`) are git's own.
 */
export function isProgramSetting(key: string, value?: string): boolean {
  const name = key.trim();
  if (!PROGRAM_SETTING.test(name)) return false;
  if (/^submodule\..+\.update$/i.test(name) && value !== undefined) return value.trim().startsWith("!");
  return true;
}

/** Environment variables that hand git settings or a config file (`GIT_CONFIG_KEY_<n>`, …). */
export function isGitConfigEnv(name: string): boolean {
  return /^GIT_CONFIG(?:_KEY_\d+|_VALUE_\d+|_COUNT|_PARAMETERS|_GLOBAL|_SYSTEM)?$|^GIT_TEMPLATE_DIR$/.test(
    name,
  );
}

/** Whether the components of a workspace-relative path reach a git control path (see the header). */
export function isGitControlPath(components: readonly string[]): boolean {
  for (let i = 0; i < components.length; i += 1) {
    if (components[i] !== ".git") continue;
    const rest = components.slice(i + 1);
    if (rest.length === 0) return true; // the `.git` entry itself: a pointer file or the gitdir
    for (let j = 0; j < rest.length; j += 1) {
      const name = rest[j] as string;
      if (name === "hooks" || (GITDIR_CONTROL_FILES as readonly string[]).includes(name)) return true;
      if (name === "info" && rest[j + 1] === "attributes") return true;
    }
  }
  return false;
}

export type GitDir = {
  /** Real path of the gitdir. */
  path: string;
  /** The `.git` entry (directory or pointer file) it was found through, when there is one. */
  dotGit?: string;
  /** The pointer files (`.git` file, `commondir`) that led here, outermost first. */
  via: string[];
};

export type GitDirScan = { gitdirs: GitDir[]; dotGits: string[]; complete: boolean; entries: number };

export const DEFAULT_MAX_GIT_SCAN_ENTRIES = 250_000;

/** Directories that are usually large and rarely the user's own sources: walked after everything else. */
const DEFERRED = new Set(["node_modules", ".venv", "venv", "target", "dist", "build", ".cache", "vendor"]);

export function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

export const kindOf = (path: string): "dir" | "file" | undefined => {
  try {
    return statSync(path).isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
};

/** The target of a `gitdir: <path>` pointer file, resolved against the file's directory. */
export function pointerTarget(file: string, base: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8").slice(0, 4096);
  } catch {
    return undefined;
  }
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!match) return undefined;
  return real(isAbsolute(match[1] as string) ? (match[1] as string) : resolve(base, match[1] as string));
}

/** The common gitdir a `commondir` file names, relative to the gitdir. */
export function commondirTarget(gitdir: string): string | undefined {
  try {
    const text = readFileSync(join(gitdir, "commondir"), "utf8").trim();
    return text === "" ? undefined : real(isAbsolute(text) ? text : resolve(gitdir, text));
  } catch {
    return undefined;
  }
}

function listDir(dir: string): Dirent[] | undefined {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
}

/** A `HEAD` file beside `objects` and `refs` folders: what git itself checks before taking a gitdir. */
const looksLikeGitdir = (list: readonly Dirent[]) =>
  list.some((d) => d.name === "HEAD" && d.isFile()) &&
  list.some((d) => d.name === "objects" && d.isDirectory()) &&
  list.some((d) => d.name === "refs" && d.isDirectory());

/** Every gitdir in `workspace` (see the header for the walk and its bound). */
export function findGitDirs(workspace: string, maxEntries = DEFAULT_MAX_GIT_SCAN_ENTRIES): GitDirScan {
  const root = real(workspace);
  const found = new Map<string, GitDir>();
  const dotGits: string[] = [];
  let entries = 0;
  let complete = true;

  const addGitdir = (path: string, via: string[], dotGit?: string) => {
    const pending: { path: string; via: string[]; dotGit?: string }[] = [{ path, via, dotGit }];
    while (pending.length > 0) {
      const next = pending.shift() as { path: string; via: string[]; dotGit?: string };
      if (found.has(next.path) || found.size >= 4_096) continue;
      found.set(next.path, {
        path: next.path,
        via: next.via,
        ...(next.dotGit ? { dotGit: next.dotGit } : {}),
      });
      const common = commondirTarget(next.path);
      if (common) pending.push({ path: common, via: [...next.via, join(next.path, "commondir")] });
      // Submodule and worktree gitdirs live below a gitdir; only these two folders are walked in it.
      for (const folder of ["modules", "worktrees"]) {
        const queue = [join(next.path, folder)];
        while (queue.length > 0 && entries < maxEntries) {
          const dir = queue.shift() as string;
          const list = listDir(dir);
          if (!list) continue;
          entries += list.length;
          const names = new Set(list.map((d) => d.name));
          if (names.has("HEAD") && (names.has("config") || names.has("commondir") || names.has("gitdir")))
            pending.push({ path: real(dir), via: next.via });
          else for (const d of list) if (d.isDirectory()) queue.push(join(dir, d.name));
        }
      }
    }
  };

  const queue: string[] = [root];
  const later: string[] = [];
  while (queue.length > 0 || later.length > 0) {
    const dir = (queue.length > 0 ? queue.shift() : later.shift()) as string;
    if (entries >= maxEntries) {
      complete = false;
      break;
    }
    const list = listDir(dir);
    if (!list) continue;
    entries += list.length;
    // A bare repository (or a gitdir under another name). Its other folders are still walked, since a
    // source directory may hold those names too; only `objects` is skipped.
    const bare = dir !== root && looksLikeGitdir(list);
    if (bare) addGitdir(real(dir), []);
    for (const entry of list) {
      if (bare && entry.name === "objects") continue;
      const path = join(dir, entry.name);
      if (entry.name === ".git") {
        dotGits.push(path);
        // A symlink named `.git` counts too: git follows it.
        const kind = kindOf(path);
        if (kind === "dir") addGitdir(real(path), [], path);
        else if (kind === "file") {
          const target = pointerTarget(path, dir);
          if (target) addGitdir(target, [path], path);
        }
        continue;
      }
      if (!entry.isDirectory()) continue;
      (DEFERRED.has(entry.name) ? later : queue).push(path);
    }
  }
  return { gitdirs: [...found.values()], dotGits, complete, entries };
}
