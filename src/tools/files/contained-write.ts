/**
 * Writes that cannot leave a root directory, whatever is renamed or swapped meanwhile.
 *
 * The realpath check in sandbox-paths.ts is policy; this module is enforcement, done where the kernel
 * decides: the root is opened, then every directory below it is opened by one name relative to the
 * directory fd already open, with `O_DIRECTORY|O_NOFOLLOW`. Node has no `openat`, so the relative lookup goes
 * through `/proc/self/fd/<dirfd>/<name>`: the procfs magic link resolves to the open directory itself, not
 * to a path that could be swapped, and `O_NOFOLLOW` refuses a symlink as the final name.
 *
 * Invariants:
 * - Missing directories are created by name in the open parent (`mkdir` never follows a final symlink),
 *   then opened no-follow like the rest.
 * - The content goes to a temporary file created `O_CREAT|O_EXCL|O_NOFOLLOW` in the final directory fd,
 *   fsynced, then renamed over the target inside the same directory fd (T11 atomicity kept; `rename`
 *   replaces a symlink at the target name instead of following it). The directory is fsynced after.
 * - A symlink met on the way, or a component that is not a directory, means the tree changed under us: the
 *   write is refused with `ContainmentError`, never done elsewhere.
 * - Without `/proc/self/fd` (not Linux, or procfs not mounted) `procfsAvailable()` is false and the caller
 *   falls back to check-then-write (the file tools say so in their header).
 */
import { randomBytes } from "node:crypto";
import { constants, existsSync } from "node:fs";
import { type FileHandle, lstat, mkdir, open, rename, rm } from "node:fs/promises";
import { relative, sep } from "node:path";

export class ContainmentError extends Error {
  constructor(path: string, reason: string) {
    super(
      `cannot write "${path}": ${reason}; the directory tree changed during the write, nothing was written`,
    );
    this.name = "ContainmentError";
  }
}

let procfs: boolean | undefined;

/** Whether `/proc/self/fd` can stand in for `openat` here (probed once). */
export function procfsAvailable(): boolean {
  procfs ??= existsSync("/proc/self/fd");
  return procfs;
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

const at = (dir: FileHandle, name: string) => `/proc/self/fd/${dir.fd}/${name}`;

async function openDir(path: string, shown: string): Promise<FileHandle> {
  try {
    return await open(path, DIR_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR") {
      throw new ContainmentError(shown, "a path component is a symlink or not a directory");
    }
    throw error;
  }
}

/**
 * Write `content` to `target` (an absolute real path under the real path `root`), never leaving `root`.
 * `shown` is the path the caller reports. Resolves whether the target existed before.
 */
export async function writeContained(
  root: string,
  target: string,
  content: string,
  shown: string = target,
): Promise<{ existed: boolean }> {
  const inside = relative(root, target);
  const parts = inside.split(sep);
  if (inside === "" || inside.startsWith("..") || parts.some((p) => p === "" || p === "." || p === "..")) {
    throw new ContainmentError(shown, "the target is not below the writable root");
  }
  const name = parts.pop() as string;
  let dir = await openDir(root, shown);
  try {
    for (const part of parts) {
      let next: FileHandle;
      try {
        next = await openDir(at(dir, part), shown);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        await mkdir(at(dir, part)).catch((mkdirError: NodeJS.ErrnoException) => {
          if (mkdirError.code !== "EEXIST") throw mkdirError;
        });
        next = await openDir(at(dir, part), shown);
      }
      await dir.close();
      dir = next;
    }
    const previous = await lstat(at(dir, name)).catch(() => undefined);
    if (previous?.isDirectory()) throw new Error(`cannot write "${shown}": is a directory`);
    const mode = previous?.isFile() ? previous.mode & 0o7777 : 0o666;
    const temporary = `.${name}.${randomBytes(6).toString("hex")}.tmp`;
    const file = await open(
      at(dir, temporary),
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      mode,
    );
    try {
      try {
        await file.writeFile(content, "utf8");
        if (previous?.isFile()) await file.chmod(mode); // the umask must not narrow an existing file's mode
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(at(dir, temporary), at(dir, name));
    } catch (error) {
      await rm(at(dir, temporary), { force: true }).catch(() => {});
      throw error;
    }
    await dir.sync().catch(() => {});
    return { existed: previous !== undefined };
  } finally {
    await dir.close();
  }
}
