import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { openAgent } from "../../src/presets/open-agent.js";
import { openStore } from "../../src/store/open-store.js";
import type { TerminalEnvironment } from "../../src/tools/terminal/environment.js";
import {
  ensureSessionTempDir,
  releaseSessionTempDir,
  STALE_AFTER_MS,
  sessionTempPath,
  sweepStaleSessionDirs,
} from "../../src/tools/terminal/session-temp-dir.js";

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

describe("who removes a session's temp dir", () => {
  it("a closing agent leaves it: the other process driving the session keeps its files", async () => {
    freshTmp();
    const dir = mkdtempSync(join(base, "bdsh-std-handover-"));
    roots.push(dir);
    const home = join(dir, "home");
    const workspace = join(dir, "ws");
    mkdirSync(home);
    mkdirSync(workspace);
    const store = await openStore({ home });
    try {
      const config = {
        ...DEFAULT_CONFIG,
        model: { ...DEFAULT_CONFIG.model, base_url: "http://127.0.0.1:9" },
      };
      const env = { DEEPSEEK_API_KEY: "test", PATH: process.env.PATH };
      const session = await store.createSession({ title: "handed over" });
      // Two servers on one host and one store, each with its own agent of the session (one before the
      // handover, one after): the same $TMPDIR path.
      const open = async () => {
        const { agent } = await openAgent({
          store,
          config,
          workspace,
          home,
          env,
          sessionId: session.id,
          projectTrusted: false,
        });
        await agent.open();
        return agent;
      };
      const first = await open();
      const second = await open();
      const terminal = (agent: typeof first) => agent.services.get("terminal") as TerminalEnvironment;
      const run = (agent: typeof first, command: string) =>
        terminal(agent).execute(command, { cwd: workspace, timeoutMs: 30_000 });
      expect(terminal(first).tempDir).toBe(terminal(second).tempDir);
      expect((await run(first, 'echo first > "$TMPDIR/first.txt"')).exitCode).toBe(0);
      expect((await run(second, 'echo second > "$TMPDIR/second.txt"')).exitCode).toBe(0);

      await first.close(); // evicted, or its server drained on SIGTERM

      const temp = terminal(second).tempDir!;
      expect(readFileSync(join(temp, "second.txt"), "utf8")).toBe("second\n");
      const read = await run(second, 'cat "$TMPDIR/first.txt" "$TMPDIR/second.txt"');
      expect(read.stdout).toBe("first\nsecond\n");
      await second.close();
      expect(existsSync(join(temp, "second.txt"))).toBe(true); // until the sweep finds it unused
    } finally {
      await store.close();
    }
  });

  it("the sweep removes dirs no command used for a day, and keeps the others", async () => {
    const root = freshTmp();
    const parent = join(root, `bdsh-sessions-${uid}`);
    const stale = sessionTempPath("s-old", "/w");
    const fresh = sessionTempPath("s-new", "/w");
    ensureSessionTempDir(stale);
    ensureSessionTempDir(fresh);
    writeFileSync(join(stale, "left.txt"), "x");
    writeFileSync(join(fresh, "kept.txt"), "x");
    const now = Date.now();
    const old = new Date(now - STALE_AFTER_MS - 60_000);
    utimesSync(stale, old, old);
    // The remains of a sweep cut short go too.
    const cut = join(parent, "s-cut-12345678.swept-abcd");
    mkdirSync(join(cut, "inner"), { recursive: true });
    // Not a directory of ours: left alone.
    writeFileSync(join(parent, "a-file"), "x");

    expect(await sweepStaleSessionDirs(parent, now)).toBe(2);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(cut)).toBe(false);
    expect(readFileSync(join(fresh, "kept.txt"), "utf8")).toBe("x");
    expect(existsSync(join(parent, "a-file"))).toBe(true);
  });

  it("the sweep never follows a link a command left: not in a session's dir, not in place of one", async () => {
    const root = freshTmp();
    const parent = join(root, `bdsh-sessions-${uid}`);
    // What a hostile command could point at: a directory of the user's outside the sessions' parent.
    const victim = mkdtempSync(join(root, "victim-"));
    writeFileSync(join(victim, "precious.txt"), "keep");
    const stale = sessionTempPath("s-links", "/w");
    ensureSessionTempDir(stale);
    symlinkSync(victim, join(stale, "home-link"));
    // A link named like a stale session dir, planted in the parent itself.
    const planted = join(parent, "s-planted-00000000");
    symlinkSync(victim, planted);
    const now = Date.now();
    const old = new Date(now - STALE_AFTER_MS - 60_000);
    utimesSync(stale, old, old);

    expect(await sweepStaleSessionDirs(parent, now)).toBe(1);
    expect(existsSync(stale)).toBe(false);
    expect(lstatSync(planted).isSymbolicLink()).toBe(true); // not a directory of ours: left alone
    expect(readFileSync(join(victim, "precious.txt"), "utf8")).toBe("keep");
  });

  it("a command's start marks the dir used, so a long-idle dir that runs again is not swept", async () => {
    freshTmp();
    const path = sessionTempPath("s-1", "/w");
    ensureSessionTempDir(path);
    const old = new Date(Date.now() - STALE_AFTER_MS - 60_000);
    utimesSync(path, old, old);
    ensureSessionTempDir(path); // the next command
    expect(await sweepStaleSessionDirs()).toBe(0);
    expect(existsSync(path)).toBe(true);
  });

  it("a random fallback dir (no private parent) is the process's own and goes at close", () => {
    const root = freshTmp();
    const parent = join(root, `bdsh-sessions-${uid}`);
    mkdirSync(parent);
    chmodSync(parent, 0o777);
    const fallback = sessionTempPath("s-1", "/w");
    expect(fallback.startsWith(parent)).toBe(false);
    releaseSessionTempDir(fallback);
    expect(existsSync(fallback)).toBe(false);
  });
});
