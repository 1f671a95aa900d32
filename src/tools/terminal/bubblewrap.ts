/**
 * Bubblewrap argument lists for the sandbox modes (T17; issue 14 findings 1, 3, 4, 5).
 *
 * Mounts, in order:
 * - `read-only` and `workspace-write`: `/` read-only, a minimal `/dev` remounted read-only (device nodes
 *   still work, nothing can be created there), a fresh `/proc`. `workspace-write` then binds the workspace
 *   read-write, pins its `.git` directory (bound onto itself, so it cannot be renamed or removed and replaced
 *   by a gitdir the model wrote) and binds every protected path under it read-only (protected-paths.ts:
 *   `.bdsh/`, `<gitdir>/hooks`, `<gitdir>/config`, ...). A protected directory or file that does not exist
 *   yet is created empty on the host first (`prepareProtectedPaths`), so it is a read-only mount point and
 *   the model cannot create it; empty `.bdsh/`, `hooks/` or `config` mean the same as missing ones.
 * - `danger-full-access`: `/` read-write, the host `/dev`, and still a fresh `/proc` (finding 4).
 * - Every mode: a new PID namespace, so the fresh `/proc` shows only the command's own processes and never
 *   the harness's `/proc/<pid>/environ`; the hidden paths (`$BDSH_HOME`: database, config, trust list,
 *   tokens) are masked by an empty read-only tmpfs (finding 3); the session's temp dir is bound read-write.
 * - There is no private writable tmpfs anywhere (finding 5): the host `/tmp` is read-only like the rest of
 *   `/` outside the writable roots, so a write there fails visibly; `$TMPDIR` is the session's temp dir.
 * - The network is shared; `--die-with-parent --new-session` always.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, relative, sep } from "node:path";
import { type ProtectedPaths, protectedPaths } from "../files/protected-paths.js";
import type { SandboxSpec } from "./environment.js";

let probed: boolean | undefined;

/** Whether `bwrap` is installed and can create the sandbox used here (probed once per process). */
export function bubblewrapAvailable(): boolean {
  if (probed === undefined) {
    const result = spawnSync(
      "bwrap",
      [
        ...["--ro-bind", "/", "/", "--dev", "/dev", "--remount-ro", "/dev", "--proc", "/proc"],
        ...["--unshare-pid", "--", "true"],
      ],
      { stdio: "ignore", timeout: 5_000 },
    );
    probed = result.status === 0;
  }
  return probed;
}

export type BubblewrapExtras = {
  /** The session's private temp dir (`$TMPDIR`), bound read-write. */
  tempDir?: string;
  /** Directories masked by an empty read-only tmpfs (`$BDSH_HOME`). */
  hide?: readonly string[];
};

const under = (root: string, path: string) => {
  const inside = relative(root, path);
  return inside === "" || (inside.split(sep)[0] !== ".." && !isAbsolute(inside));
};

const isDirectory = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;

/** Create, empty, the protected paths under the workspace that do not exist yet (see the header). */
export function prepareProtectedPaths(paths: ProtectedPaths): void {
  for (const entry of paths.paths) {
    if (entry.exists || !under(paths.workspace, entry.path) || !isDirectory(dirname(entry.path))) continue;
    try {
      if (entry.kind === "dir") mkdirSync(entry.path, { mode: 0o755 });
      else writeFileSync(entry.path, "", { flag: "wx", mode: 0o644 });
      entry.exists = true;
    } catch {
      // Created concurrently (EEXIST) or not creatable: `exists` stays false and it is left unbound.
    }
  }
}

export function bubblewrapArgs(spec: SandboxSpec, cwd: string, extras: BubblewrapExtras = {}): string[] {
  const args =
    spec.mode === "danger-full-access"
      ? ["--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"]
      : ["--ro-bind", "/", "/", "--dev", "/dev", "--remount-ro", "/dev", "--proc", "/proc"];
  const hide = (extras.hide ?? []).filter(isDirectory);
  const mask = (dir: string) => args.push("--tmpfs", dir, "--remount-ro", dir);
  // A hidden directory that contains the workspace is masked before the workspace is bound back in.
  for (const dir of hide) if (under(dir, spec.workspace)) mask(dir);
  if (spec.mode === "workspace-write") {
    args.push("--bind", spec.workspace, spec.workspace);
    const paths = protectedPaths(spec.workspace);
    prepareProtectedPaths(paths);
    const dotGit = `${paths.workspace}/.git`;
    if (isDirectory(dotGit)) args.push("--bind", dotGit, dotGit);
    for (const entry of paths.paths) {
      if (entry.exists && under(paths.workspace, entry.path)) args.push("--ro-bind", entry.path, entry.path);
    }
  }
  if (extras.tempDir) args.push("--bind", extras.tempDir, extras.tempDir);
  for (const dir of hide) if (!under(dir, spec.workspace)) mask(dir);
  args.push("--unshare-pid", "--die-with-parent", "--new-session", "--chdir", cwd);
  return args;
}
