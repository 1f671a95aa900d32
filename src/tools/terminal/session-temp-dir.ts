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
 */
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The private parent, checked once per process and tmp dir (`/tmp` is sticky: no one else can swap it). */
let checked: { tmp: string; root: string | undefined } | undefined;

function privateRoot(): string | undefined {
  const tmp = tmpdir();
  if (checked?.tmp !== tmp) checked = { tmp, root: checkPrivateRoot(tmp) };
  return checked.root;
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

/** Makes `path` (mode 0700) when it is not there, and says whether it is a directory of ours now. */
export function ensureSessionTempDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const stat = lstatSync(path);
  const uid = process.getuid?.() ?? 0;
  if (!stat.isDirectory() || stat.uid !== uid)
    throw new Error(`the session's temp dir ${path} is not a directory of this user`);
}
