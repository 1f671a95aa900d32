/**
 * A session's private temp dir (`$TMPDIR` of its commands):
 * `<os tmp>/bdsh-sessions-<uid>/<session>-<hash of the workspace>`.
 *
 * The path is a function of the session and its workspace, not of the process, so the runtime context that
 * names it (L13) reads the same on whichever server drives the session, and a request is the same bytes
 * after a handover. The workspace hash keeps two stores that reuse a session id (two projects, two test
 * runs) from sharing, and removing, one dir.
 * A predictable name in a shared `/tmp` must not be claimable by another user: the parent is made mode 0700
 * and used only when it is a real directory (not a link) owned by us with no access for group or others;
 * otherwise the dir is a fresh random one, as any unpredictable temp dir. The session's dir is made on
 * first use (a command about to run), not when its path is shown.
 *
 * Who removes it. The dir belongs to the session, not to the process that happens to drive it: two
 * `bdsh serve` on one host (or `bdsh chat` beside a server on one home) hand a session back and forth, and
 * each of them uses the same path. An agent closing (evicted when idle, a server draining on SIGTERM, a
 * `bdsh run` ending) cannot know whether another process on this host drives the session by now: its lease
 * is released between turns, and the other process may already be running a command in the dir. So:
 *
 * - A closing agent never removes the shared dir (`releaseSessionTempDir`). It removes only a random
 *   fallback dir, which no other process can name.
 * - Every command's start touches the dir (`ensureSessionTempDir`), so its mtime says when the session last
 *   used it.
 * - Dirs unused for `STALE_AFTER_MS` (a day) are swept: by every bdsh process that uses the parent, once
 *   when it first does and again at most every `SWEEP_EVERY_MS`, in the background, never on a turn's path.
 *   A session idle that long finds an empty `$TMPDIR` when it runs its next command, as after a reboot.
 *   The sweep renames a stale dir before removing it, so a command starting at that moment gets a fresh
 *   dir rather than one emptied under it.
 */
import { createHash, randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync, rmSync, utimesSync } from "node:fs";
import { lstat, readdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A session's dir unused (no command started in it) this long is removed by the sweep. */
export const STALE_AFTER_MS = 24 * 60 * 60 * 1000;
/** How often one process sweeps the parent at most. */
const SWEEP_EVERY_MS = 60 * 60 * 1000;
/** The mark of a dir the sweep took out of use (renamed, then removed). */
const SWEPT_MARK = ".swept-";

/** The private parent, checked once per process and tmp dir (`/tmp` is sticky: no one else can swap it). */
let checked: { tmp: string; root: string | undefined } | undefined;
let lastSweep = 0;

function privateRoot(): string | undefined {
  const tmp = tmpdir();
  if (checked?.tmp !== tmp) checked = { tmp, root: checkPrivateRoot(tmp) };
  const root = checked.root;
  if (root && Date.now() - lastSweep >= SWEEP_EVERY_MS) {
    lastSweep = Date.now();
    void sweepStaleSessionDirs(root).catch(() => undefined); // a failed sweep is retried by the next one
  }
  return root;
}

function checkPrivateRoot(tmp: string): string | undefined {
  const uid = process.getuid?.() ?? 0;
  const root = join(tmp, `bdsh-sessions-${uid}`);
  try {
    mkdirSync(root, { mode: 0o700 });
  } catch {
    // It exists: checked below.
  }
  const stat = lstatSync(root, { throwIfNoEntry: false });
  const own = stat?.isDirectory() && stat.uid === uid && (stat.mode & 0o077) === 0;
  return own ? root : undefined;
}

/** The dir's path for `sessionId` in `workspace` (no file system change beyond the private parent). */
export function sessionTempPath(sessionId: string | undefined, workspace: string): string {
  const session = (sessionId ?? "session").replace(/[^A-Za-z0-9_-]/g, "").slice(0, 64) || "session";
  const name = `${session}-${createHash("sha256").update(workspace).digest("hex").slice(0, 8)}`;
  const root = privateRoot();
  return root ? join(root, name) : mkdtempSync(join(tmpdir(), `bdsh-${name.slice(0, 40)}-`));
}

/**
 * Makes `path` (mode 0700) when it is not there, checks that it is a directory of ours, and marks it used
 * now (its mtime, which the sweep reads).
 */
export function ensureSessionTempDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const stat = lstatSync(path);
  const uid = process.getuid?.() ?? 0;
  if (!stat.isDirectory() || stat.uid !== uid)
    throw new Error(`the session's temp dir ${path} is not a directory of this user`);
  const now = new Date();
  utimesSync(path, now, now);
}

/**
 * What a closing agent does with its session's dir: a random fallback dir (no private parent) was this
 * process's alone and goes; the shared path stays for whichever process drives the session next (header).
 */
export function releaseSessionTempDir(path: string): void {
  const root = privateRoot();
  if (root !== undefined && path.startsWith(`${root}/`)) return;
  rmSync(path, { recursive: true, force: true });
}

/**
 * Removes the session dirs under `root` (default: the private parent) that no command used for
 * `STALE_AFTER_MS` before `now`, and the remains of an earlier sweep cut short. Entries that are not
 * directories of ours are left alone.
 */
export async function sweepStaleSessionDirs(root?: string, now = Date.now()): Promise<number> {
  const parent = root ?? privateRoot();
  if (parent === undefined) return 0;
  const uid = process.getuid?.() ?? 0;
  let removed = 0;
  for (const name of await readdir(parent)) {
    const path = join(parent, name);
    const stat = await lstat(path).catch(() => undefined);
    if (!stat?.isDirectory() || stat.uid !== uid) continue;
    const swept = name.includes(SWEPT_MARK);
    if (!swept && now - stat.mtimeMs < STALE_AFTER_MS) continue;
    // Out of use first: a command starting now makes a fresh dir instead of losing files mid-removal.
    const doomed = swept ? path : `${path}${SWEPT_MARK}${randomBytes(4).toString("hex")}`;
    try {
      if (!swept) await rename(path, doomed);
      await rm(doomed, { recursive: true, force: true });
      removed++;
    } catch {
      // Another process's sweep took it first.
    }
  }
  return removed;
}
