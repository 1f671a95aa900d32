/**
 * The after-command check of git's control files (SECURITY.md rows 10g–10i). The kernel cannot stop a `.git` that
 * appears during a command (`git init`, `git clone`, `mkdir x/.git`), nor a `commondir` created in a pinned
 * gitdir (an empty placeholder would make git fail): what such a command leaves behind is looked at after
 * it, and what would run a program on the user's next `git` command is taken out.
 *
 * Invariants:
 * - `snapshotGitControl` records, for every gitdir in the workspace (git-control.ts `findGitDirs`), the
 *   identity (inode, size, mtime) of its `config`, `config.worktree`, `commondir`, `gitdir` and hook files,
 *   and of every `.git` pointer file. Only what is new or changed between two snapshots is checked, so a
 *   setting the user made outside a command is never touched.
 * - A new or changed config is read by git itself (`git config --file F --list --null`, no includes
 *   followed, no system or global config). Every program-running setting (`isProgramSetting`) is removed
 *   with `git config --unset-all`, after the original is copied to `<file>.bdsh-quarantine[-n]` for the
 *   user to inspect. A config git cannot read, or one that still holds such a setting after removal, is
 *   moved aside whole to that name.
 * - A config outside the workspace that a new pointer (`commondir`, a `.git` file) leads to is not
 *   rewritten: the pointer inside the workspace is moved aside instead.
 * - A new or changed hook file (not `*.sample`) is moved aside to `<hook>.bdsh-quarantine[-n]`.
 * - Nothing is deleted: every repair leaves the original under its quarantine name.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, renameSync, statSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import {
  DEFAULT_MAX_GIT_SCAN_ENTRIES,
  findGitDirs,
  type GitDir,
  isProgramSetting,
  real,
} from "../../tools/files/git-control.js";

export type GitControlSnapshot = {
  /** Real path of the workspace. */
  workspace: string;
  /** Path → identity of each control file found. */
  files: Map<string, string>;
  gitdirs: GitDir[];
  complete: boolean;
};

export type GitRepair = {
  /** The file repaired or moved aside. */
  path: string;
  action: "settings-removed" | "quarantined";
  /** The settings found (for a config). */
  settings: string[];
  /** Where the original is kept. */
  quarantine: string;
};

const identity = (path: string): string | undefined => {
  const info = statSync(path, { throwIfNoEntry: false, bigint: true });
  return info?.isFile() ? `${info.ino}:${info.size}:${info.mtimeNs}` : undefined;
};

const CONFIG_FILES = ["config", "config.worktree"];

function hookFiles(gitdir: string): string[] {
  try {
    return readdirSync(join(gitdir, "hooks"))
      .filter((name) => !name.endsWith(".sample") && !name.includes(".bdsh-quarantine"))
      .map((name) => join(gitdir, "hooks", name));
  } catch {
    return [];
  }
}

export function snapshotGitControl(
  workspace: string,
  maxEntries = DEFAULT_MAX_GIT_SCAN_ENTRIES,
): GitControlSnapshot {
  const scan = findGitDirs(workspace, maxEntries);
  const files = new Map<string, string>();
  const note = (path: string) => {
    const id = identity(path);
    if (id) files.set(path, id);
  };
  for (const dotGit of scan.dotGits) note(dotGit);
  for (const gitdir of scan.gitdirs) {
    for (const name of [...CONFIG_FILES, "commondir", "gitdir"]) note(join(gitdir.path, name));
    for (const hook of hookFiles(gitdir.path)) note(hook);
  }
  return { workspace: real(workspace), files, gitdirs: scan.gitdirs, complete: scan.complete };
}

/** The settings a config file holds, read by git; undefined when git cannot read it. */
function settingsOf(file: string): string[] | undefined {
  try {
    const out = execFileSync("git", ["config", "--file", file, "--list", "--null"], {
      cwd: "/",
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 10_000,
      maxBuffer: 16 * 1024 * 1024,
    }).toString();
    // `--null`: each entry is `key\nvalue\0`, or `key\0` for a key without a value.
    return out
      .split("\0")
      .filter((entry) => entry !== "")
      .filter((entry) => {
        const nl = entry.indexOf("\n");
        return nl < 0 ? isProgramSetting(entry) : isProgramSetting(entry.slice(0, nl), entry.slice(nl + 1));
      })
      .map((entry) => entry.split("\n")[0] as string);
  } catch {
    return undefined;
  }
}

function quarantineName(path: string): string {
  for (let n = 1; ; n += 1) {
    const candidate = `${path}.bdsh-quarantine${n === 1 ? "" : `-${n}`}`;
    if (!existsSync(candidate)) return candidate;
  }
}

function moveAside(path: string, settings: string[]): GitRepair {
  const quarantine = quarantineName(path);
  renameSync(path, quarantine);
  return { path, action: "quarantined", settings, quarantine };
}

/** Removes the program-running settings of `file`, keeping a copy; undefined when there were none. */
function repairConfig(file: string): GitRepair | undefined {
  const found = settingsOf(file);
  if (found === undefined) return moveAside(file, []);
  if (found.length === 0) return undefined;
  const settings = [...new Set(found)];
  const quarantine = quarantineName(file);
  copyFileSync(file, quarantine);
  for (const key of settings) {
    try {
      execFileSync("git", ["config", "--file", file, "--unset-all", key], {
        cwd: "/",
        env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
        stdio: "ignore",
        timeout: 10_000,
      });
    } catch {
      // Checked below: whatever git could not remove makes the whole file go aside.
    }
  }
  const left = settingsOf(file);
  if (left === undefined || left.length > 0) {
    renameSync(file, `${quarantine}.partial`);
    return { path: file, action: "quarantined", settings, quarantine };
  }
  return { path: file, action: "settings-removed", settings, quarantine };
}

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel !== "" && rel.split(sep)[0] !== ".." && !isAbsolute(rel);
};

/** What changed from `before` to `after` that would make git run a program, repaired (see the header). */
export function repairGitControl(
  workspace: string,
  before: GitControlSnapshot,
  after: GitControlSnapshot,
): GitRepair[] {
  const changed = (path: string) => after.files.has(path) && before.files.get(path) !== after.files.get(path);
  const repairs: GitRepair[] = [];
  const done = new Set<string>();
  for (const gitdir of after.gitdirs) {
    for (const name of CONFIG_FILES) {
      const file = join(gitdir.path, name);
      if (done.has(file) || !changed(file)) continue;
      done.add(file);
      if (inside(workspace, file)) {
        const repair = repairConfig(file);
        if (repair) repairs.push(repair);
        continue;
      }
      // Outside the workspace: the command did not write it, a new pointer leads to it.
      const settings = settingsOf(file);
      if (settings !== undefined && settings.length === 0) continue;
      const pointer = [...gitdir.via].reverse().find((p) => inside(workspace, p) && existsSync(p));
      if (pointer && !done.has(pointer)) {
        done.add(pointer);
        repairs.push(moveAside(pointer, settings ?? []));
      }
    }
    for (const hook of hookFiles(gitdir.path)) {
      if (done.has(hook) || !changed(hook) || !inside(workspace, hook)) continue;
      done.add(hook);
      repairs.push(moveAside(hook, []));
    }
  }
  return repairs;
}
