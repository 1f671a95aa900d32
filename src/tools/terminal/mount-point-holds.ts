/**
 * Which bdsh processes hold a mount point the sandbox made (./bubblewrap.ts): a protected path that did not
 * exist (`.bdsh/`, `config.worktree`) is created empty so it can be mounted read-only, and removed again
 * when the last sandbox using it ends. "Last" must count every process, not only this one: removing the
 * directory while another process's sandbox runs detaches that sandbox's read-only mount (the kernel drops
 * mounts on a removed directory in every namespace), and the model there could then create the path and
 * write into it.
 *
 * - A process that made a mount point, or uses one another bdsh process made, leaves a file named by its
 *   pid in `<tmp>/bdsh-mount-points-<uid>/<sha256 of the path>/`. A path with no such folder was made by a
 *   person (or existed before): nobody removes it.
 * - Releasing removes this process's file, forgets files of processes that are gone, and removes the
 *   mount point (if still empty) only when no holder is left.
 * - Every change happens under an exclusive lock (`<folder>.lock`, made with mkdir); a lock older than
 *   `LOCK_STALE_MS` was left by a process that died holding it and is broken.
 * - The registry lives outside every workspace and is read-only inside the sandbox. When it cannot be used
 *   (not ours, not creatable), holds fall back to this process alone, as before.
 */
import { createHash } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive } from "./process-alive.js";

const LOCK_STALE_MS = 5_000;
const LOCK_TRIES = 500;

function registryRoot(): string | undefined {
  const uid = process.getuid?.() ?? 0;
  const root = join(tmpdir(), `bdsh-mount-points-${uid}`);
  try {
    mkdirSync(root, { mode: 0o700 });
  } catch {
    // Exists already: used only when it is our own directory, not a link or another user's.
  }
  const stat = lstatSync(root, { throwIfNoEntry: false });
  return stat?.isDirectory() && stat.uid === uid ? root : undefined;
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

type Held<T> = { ok: true; value: T } | { ok: false; why: "no registry" | "busy" };

/** Runs `fn` with the path's holder folder under its lock. */
function withHolders<T>(path: string, fn: (folder: string) => T): Held<T> {
  const root = registryRoot();
  if (!root) return { ok: false, why: "no registry" };
  const folder = join(root, createHash("sha256").update(path).digest("hex"));
  const lock = `${folder}.lock`;
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(lock, { mode: 0o700 });
      break;
    } catch {
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
      else if (attempt >= LOCK_TRIES) return { ok: false, why: "busy" };
      else sleepSync(2);
    }
  }
  try {
    return { ok: true, value: fn(folder) };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

const isDirectory = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;

/** This process made the mount point at `path`: it holds it. */
export function holdMadeMountPoint(path: string): void {
  withHolders(path, (folder) => {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    writeFileSync(join(folder, String(process.pid)), "");
  });
}

/**
 * `path` exists: when another bdsh process made it (its holders are on record), this process holds it too
 * and returns true; a path a person made returns false and is never removed.
 */
export function joinMountPoint(path: string): boolean {
  const held = withHolders(path, (folder) => {
    if (!isDirectory(folder)) return false;
    writeFileSync(join(folder, String(process.pid)), "");
    return true;
  });
  return held.ok && held.value;
}

/**
 * This process's sandboxes no longer use the mount point at `path`: when no live process holds it any
 * more, `remove` runs (under the lock, so no other process joins in between). When the lock stays taken,
 * nothing is removed: an empty mount point left behind is harmless, a removed one in use is not.
 */
export function releaseMountPoint(path: string, remove: () => void): void {
  const held = withHolders(path, (folder) => {
    if (isDirectory(folder)) {
      for (const name of readdirSync(folder)) {
        const pid = Number(name);
        if (name === String(process.pid) || !Number.isInteger(pid) || !processAlive(pid))
          unlinkSync(join(folder, name));
      }
      if (readdirSync(folder).length > 0) return;
      rmdirSync(folder);
    }
    remove();
  });
  if (!held.ok && held.why === "no registry") remove(); // this process is the only holder it can know of
}
