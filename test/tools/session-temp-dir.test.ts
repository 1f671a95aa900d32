import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ensureSessionTempDir, sessionTempPath } from "../../src/tools/terminal/session-temp-dir.js";

const saved = process.env.TMPDIR;
const base = tmpdir();
const roots: string[] = [];
function freshTmp(): string {
  const root = mkdtempSync(join(base, "bdsh-std-"));
  roots.push(root);
  process.env.TMPDIR = root;
  return root;
}
afterEach(() => {
  if (saved === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = saved;
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});
const uid = process.getuid?.() ?? 0;

describe("the session temp dir", () => {
  it("is one path per session and workspace, under a private parent, made on first use", () => {
    const root = freshTmp();
    const path = sessionTempPath("s-1", "/work/a");
    expect(path).toBe(sessionTempPath("s-1", "/work/a"));
    expect(path).not.toBe(sessionTempPath("s-1", "/work/b"));
    expect(path).not.toBe(sessionTempPath("s-2", "/work/a"));
    expect(path.startsWith(join(root, `bdsh-sessions-${uid}`))).toBe(true);
    expect(lstatSync(join(root, `bdsh-sessions-${uid}`)).mode & 0o777).toBe(0o700);
    expect(lstatSync(path, { throwIfNoEntry: false })).toBeUndefined();
    ensureSessionTempDir(path);
    expect(lstatSync(path).isDirectory()).toBe(true);
    expect(lstatSync(path).mode & 0o777).toBe(0o700);
  });

  it("does not use a parent someone planted as a link or left open to others", () => {
    const root = freshTmp();
    const elsewhere = join(root, "elsewhere");
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(root, `bdsh-sessions-${uid}`));
    const viaLink = sessionTempPath("s-1", "/w");
    expect(viaLink.startsWith(join(root, `bdsh-sessions-${uid}`))).toBe(false);
    expect(viaLink.startsWith(elsewhere)).toBe(false);

    const open = freshTmp();
    mkdirSync(join(open, `bdsh-sessions-${uid}`));
    chmodSync(join(open, `bdsh-sessions-${uid}`), 0o777);
    const viaOpen = sessionTempPath("s-1", "/w");
    expect(viaOpen.startsWith(join(open, `bdsh-sessions-${uid}`))).toBe(false);
    expect(lstatSync(viaOpen).mode & 0o077).toBe(0);
  });

  it("refuses a link planted where a session's dir goes: no command writes through it", () => {
    freshTmp();
    const path = sessionTempPath("s-1", "/w");
    const target = mkdtempSync(join(base, "bdsh-std-target-"));
    roots.push(target);
    symlinkSync(target, path);
    expect(() => ensureSessionTempDir(path)).toThrow(/not a directory of this user/);
  });
});
