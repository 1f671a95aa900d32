/**
 * Bubblewrap argument lists for the sandbox modes (T17).
 *
 * Mounts, in order:
 * - `read-only` and `workspace-write`: `/` read-only, a minimal `/dev` remounted read-only (device nodes
 *   still work, nothing can be created there), a fresh `/proc`. `workspace-write` then binds the workspace
 *   read-write, pins every `.git` directory in it, at any depth (bound onto itself, so it cannot be renamed
 *   or removed and replaced by a gitdir the model wrote) and binds every protected path under it read-only
 *   (protected-paths.ts: `.bdsh/`, and for every gitdir found `hooks`, `config`, `config.worktree`,
 *   `info/attributes`, an existing `commondir`, ...). A `.git` that appears during the command is not
 *   bound; the after-command repair (src/guards/git-repair/) handles it. A protected directory or file that does not exist
 *   yet is created empty on the host first (`prepareProtectedPaths`), so it is a read-only mount point and
 *   the model cannot create it; empty `.bdsh/`, `hooks/` or `config` mean the same as missing ones. Such a
 *   mount point lives as long as the sandboxes that use it: when the last one ends it is removed again if
 *   still empty (`releaseMountPoints`), so running bdsh in a directory leaves no empty `.bdsh/` behind. The
 *   last one counts every bdsh process (./mount-point-holds.ts): removing it under another process's running
 *   sandbox would detach that sandbox's read-only mount.
 * - `danger-full-access`: `/` read-write, the host `/dev`, and still a fresh `/proc` (finding 4).
 * - Every mode: a new PID namespace, so the fresh `/proc` shows only the command's own processes and never
 *   the harness's `/proc/<pid>/environ`; the hidden paths (`$BDSH_HOME`: database, config, trust list,
 *   tokens) are masked by an empty read-only tmpfs (finding 3); the session's temp dir is bound read-write.
 * - There is no private writable tmpfs anywhere (finding 5): the host `/tmp` is read-only like the rest of
 *   `/` outside the writable roots, so a write there fails visibly; `$TMPDIR` is the session's temp dir.
 * - The network (`isolateNetwork`, from `sandbox_network` off or proxy; never under danger-full-access):
 *   `--unshare-net` gives the command a namespace with a loopback of its own, so neither the internet nor
 *   a service on this machine's loopback is reachable (Codex's workspace-write default). The well-known
 *   unix sockets of local services (`localSocketPaths`: PostgreSQL, tmux, X11, the session bus, docker)
 *   are masked too. In proxy mode the proxy's socket directory (under the hidden `$BDSH_HOME`) is bound
 *   read-only back into the mask, for this sandbox only.
 * - `.bdsh/` below the workspace: the trusted project roots inside it (`projectRoots`) get their `.bdsh`
 *   prepared and bound read-only like the workspace's own, since a run started there would load it. A
 *   `.bdsh` elsewhere below the workspace is writable to commands (the file tools refuse it at every depth):
 *   nothing loads it unless a person later trusts that directory.
 * - `--die-with-parent --new-session` always.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, realpathSync, rmdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, relative, sep } from "node:path";
import { type ProtectedPaths, protectedPaths } from "../files/protected-paths.js";
import type { SandboxSpec } from "./environment.js";
import { holdMadeMountPoint, joinMountPoint, releaseMountPoint } from "./mount-point-holds.js";

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
  /** Run in a network namespace of its own (`sandbox_network` off or proxy); ignored under full access. */
  isolateNetwork?: boolean;
  /** The egress proxy's socket directory, bound read-only even where it lies inside a hidden directory. */
  proxyDir?: string;
  /** Trusted project roots whose `.bdsh` stays read-only when they lie inside the workspace. */
  projectRoots?: readonly string[];
};

/**
 * Well-known unix sockets of this machine's services, masked with the network: a unix socket needs no
 * network, and these reach a database (PostgreSQL's default directories on Debian, Fedora and Arch), the
 * user's terminal (a tmux server: `send-keys` types into it), the desktop (X11, the session bus under
 * `/run/user/<uid>`) or the container engine.
 */
function localSocketPaths(): string[] {
  const uid = process.getuid?.() ?? 0;
  return [
    ...["/run/postgresql", "/var/run/postgresql", "/tmp/.s.PGSQL.5432"],
    ...[`/tmp/tmux-${uid}`, "/tmp/.X11-unix", `/run/user/${uid}`],
    ...["/run/docker.sock", "/var/run/docker.sock"],
  ];
}

/** Probed once: whether bwrap may also make a network namespace here. */
let networkProbed: boolean | undefined;
export function networkIsolationAvailable(): boolean {
  if (networkProbed === undefined) {
    const result = spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-net", "--", "true"], {
      stdio: "ignore",
      timeout: 5_000,
    });
    networkProbed = result.status === 0;
  }
  return networkProbed;
}

const under = (root: string, path: string) => {
  const inside = relative(root, path);
  return inside === "" || (inside.split(sep)[0] !== ".." && !isAbsolute(inside));
};

const realOrSelf = (path: string) => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

const isDirectory = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;

/**
 * Mount points this process made for protected paths that did not exist, with how many running sandboxes
 * hold each: the last one to end removes it, so a directory bdsh ran in is left as it was (no empty
 * `.bdsh/`), while a sandbox still running keeps its read-only mount.
 */
const madeMountPoints = new Map<string, number>();

/**
 * Create, empty, the protected paths under the workspace that do not exist yet (see the header); returns
 * the ones this process made (or holds already for another sandbox), to give back with
 * `releaseMountPoints` once the sandbox has ended.
 */
export function prepareProtectedPaths(paths: ProtectedPaths): string[] {
  const held: string[] = [];
  for (const entry of paths.paths) {
    if (!under(paths.workspace, entry.path)) continue;
    const holders = madeMountPoints.get(entry.path);
    if (entry.exists) {
      // Made by this process for a sandbox still running: held by this one too.
      if (holders !== undefined) {
        madeMountPoints.set(entry.path, holders + 1);
        held.push(entry.path);
      } else if (joinMountPoint(entry.path)) {
        // Made by another bdsh process: held here too, so that process's end does not remove it under us.
        madeMountPoints.set(entry.path, 1);
        held.push(entry.path);
      }
      continue;
    }
    if (!isDirectory(dirname(entry.path))) continue;
    try {
      if (entry.kind === "dir") mkdirSync(entry.path, { mode: 0o755 });
      else writeFileSync(entry.path, "", { flag: "wx", mode: 0o644 });
      entry.exists = true;
      madeMountPoints.set(entry.path, 1);
      holdMadeMountPoint(entry.path);
      held.push(entry.path);
    } catch {
      // Created concurrently (EEXIST) or not creatable: `exists` stays false and it is left unbound.
    }
  }
  return held;
}

/**
 * A sandbox that held these mount points has ended: each one no other sandbox of this process holds is
 * removed if it is still empty (a person may have filled it since; then it stays).
 */
export function releaseMountPoints(held: readonly string[]): void {
  for (const path of held) {
    const holders = (madeMountPoints.get(path) ?? 1) - 1;
    if (holders > 0) {
      madeMountPoints.set(path, holders);
      continue;
    }
    madeMountPoints.delete(path);
    // Removed only once no bdsh process holds it (./mount-point-holds.ts).
    releaseMountPoint(path, () => {
      try {
        const stat = statSync(path, { throwIfNoEntry: false });
        if (stat?.isDirectory())
          rmdirSync(path); // fails, and it stays, unless empty
        else if (stat?.isFile() && stat.size === 0) unlinkSync(path);
      } catch {
        // Not empty, or gone already: left as it is.
      }
    });
  }
}

/** The argument list, and the mount points it holds until the sandbox ends (`releaseMountPoints`). */
export type SandboxArgs = { args: string[]; mountPoints: string[] };

export function bubblewrapArgs(spec: SandboxSpec, cwd: string, extras: BubblewrapExtras = {}): SandboxArgs {
  let mountPoints: string[] = [];
  const args =
    spec.mode === "danger-full-access"
      ? ["--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"]
      : ["--ro-bind", "/", "/", "--dev", "/dev", "--remount-ro", "/dev", "--proc", "/proc"];
  const hide = (extras.hide ?? []).filter(isDirectory);
  const isolate = extras.isolateNetwork === true && spec.mode !== "danger-full-access";
  const proxyDir = isolate && extras.proxyDir && isDirectory(extras.proxyDir) ? extras.proxyDir : undefined;
  // The proxy's directory is bound inside the tmpfs before the tmpfs turns read-only (its mount point must
  // be made there first).
  const mask = (dir: string) => {
    args.push("--tmpfs", dir);
    if (proxyDir && under(dir, proxyDir)) args.push("--ro-bind", proxyDir, proxyDir);
    args.push("--remount-ro", dir);
  };
  // A hidden directory that contains the workspace is masked before the workspace is bound back in.
  for (const dir of hide) if (under(dir, spec.workspace)) mask(dir);
  if (spec.mode === "workspace-write") {
    args.push("--bind", spec.workspace, spec.workspace);
    const paths = protectedPaths(spec.workspace, { projectRoots: extras.projectRoots ?? [] });
    mountPoints = prepareProtectedPaths(paths);
    // Shallowest first, a pinned `.git` before the read-only paths inside it: a mount made below a later
    // mount point would be hidden by it.
    const mounts = [
      ...paths.pins
        .filter((pin) => under(paths.workspace, pin))
        .map((pin) => ({ path: pin, flag: "--bind" })),
      ...paths.paths
        .filter((entry) => entry.exists && under(paths.workspace, entry.path))
        .map((entry) => ({ path: entry.path, flag: "--ro-bind" })),
    ].sort((a, b) => a.path.split(sep).length - b.path.split(sep).length);
    for (const mount of mounts) args.push(mount.flag, mount.path, mount.path);
  }
  if (extras.tempDir) args.push("--bind", extras.tempDir, extras.tempDir);
  for (const dir of hide) if (!under(dir, spec.workspace)) mask(dir);
  if (isolate) {
    for (const path of new Set(localSocketPaths().map(realOrSelf))) {
      const kind = statSync(path, { throwIfNoEntry: false });
      if (!kind || under(path, spec.workspace) || (extras.tempDir && under(path, extras.tempDir))) continue;
      if (kind.isDirectory()) args.push("--tmpfs", path, "--remount-ro", path);
      else args.push("--ro-bind", "/dev/null", path);
    }
    if (proxyDir && !hide.some((dir) => under(dir, proxyDir))) args.push("--ro-bind", proxyDir, proxyDir);
    args.push("--unshare-net");
  }
  args.push("--unshare-pid", "--die-with-parent", "--new-session", "--chdir", cwd);
  return { args, mountPoints };
}
