/**
 * Issue 14 finding 1 (Codex "limited git writes"): under workspace-write, `.bdsh/` and the parts of git that
 * run code (`<gitdir>/hooks`, `<gitdir>/config`, pointer files resolved) stay read-only for the file tools
 * and in the bubblewrap mount, while `git add` and `git commit` keep working.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { findGitDirs } from "../../src/tools/files/git-control.js";
import { isProtected, protectedPaths } from "../../src/tools/files/protected-paths.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { createStandardRegistry } from "../../src/tools/standard.js";
import { bubblewrapAvailable } from "../../src/tools/terminal/bubblewrap.js";
import { waitUntil } from "../support/wait.js";
import { call, makeExec, tempDir } from "./support.js";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
    cwd,
    stdio: "pipe",
  }).toString();

function repo(): string {
  const workspace = tempDir("bdsh-protected-");
  git(workspace, "init", "-q");
  writeFileSync(join(workspace, "a.txt"), "a\n");
  git(workspace, "add", "a.txt");
  git(workspace, "commit", "-q", "-m", "first");
  return workspace;
}

function setup(workspace: string) {
  const ctx = makeExec({ workspace, sandbox: "workspace-write" });
  const registry = createStandardRegistry();
  const pipeline = new ToolPipeline({ registry, hooks: new HookBus() });
  const tool = async (name: string, args: Record<string, unknown>) =>
    (await pipeline.run(call(name, name === "bash" ? { description: "t", ...args } : args), ctx.exec)).text;
  return { ctx, tool };
}

const denied = (path: string) =>
  `Error: cannot write "${path}": [sandbox: file access denied under workspace-write mode]`;

describe("issue 14 finding 1: protected paths", () => {
  it("resolves a worktree's pointer file and commondir, and submodule gitdirs", () => {
    const main = repo();
    git(main, "worktree", "add", "-q", join(main, "wt"));
    mkdirSync(join(main, ".git", "modules", "sub", "hooks"), { recursive: true });
    writeFileSync(join(main, ".git", "modules", "sub", "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(join(main, ".git", "modules", "sub", "config"), "");
    const paths = protectedPaths(join(main, "wt"));
    const list = paths.paths.map((p) => p.path);
    expect(list).toContain(join(main, "wt", ".bdsh"));
    expect(list).toContain(join(main, "wt", ".git"));
    expect(list).toContain(join(main, ".git", "worktrees", "wt", "config.worktree"));
    expect(list).toContain(join(main, ".git", "hooks"));
    expect(list).toContain(join(main, ".git", "config"));
    expect(list).toContain(join(main, ".git", "modules", "sub", "hooks"));
    expect(isProtected(paths, join(main, ".git", "hooks", "pre-commit"))).toBe(true);
    expect(isProtected(paths, join(main, ".git", "index"))).toBe(false);
    expect(isProtected(paths, join(main, ".git", "config.lock"))).toBe(false);
  });

  it("the file tools refuse .bdsh, hooks, config and the pointer file, and may write the rest of .git", async () => {
    const workspace = repo();
    const { tool } = setup(workspace);
    for (const path of [".bdsh/plugins/x.mjs", ".bdsh/config.yaml", ".git/hooks/pre-commit", ".git/config"]) {
      expect(await tool("write", { file_path: path, content: "x" })).toBe(denied(join(workspace, path)));
    }
    // Through a symlink to the hooks directory: the real path is what counts.
    execFileSync("ln", ["-s", join(workspace, ".git", "hooks"), join(workspace, "h")]);
    expect(await tool("write", { file_path: "h/post-checkout", content: "x" })).toBe(
      denied(join(workspace, "h/post-checkout")),
    );
    await tool("read", { file_path: ".git/config" });
    expect(
      await tool("edit", {
        file_path: ".git/config",
        old_string: "[core]",
        new_string: "[core]\n\thooksPath = /x",
      }),
    ).toBe(denied(join(workspace, ".git/config")));
    expect(existsSync(join(workspace, ".bdsh"))).toBe(false);
    expect(existsSync(join(workspace, ".git", "hooks", "pre-commit"))).toBe(false);
    await tool("read", { file_path: ".git/info/exclude" });
    expect(await tool("write", { file_path: ".git/info/exclude", content: "*.log\n" })).toMatch(
      /^(Created|Updated) file/,
    );

    const main = repo();
    git(main, "worktree", "add", "-q", join(main, "wt"));
    const wt = setup(join(main, "wt"));
    expect(await wt.tool("write", { file_path: ".git", content: "gitdir: /elsewhere\n" })).toBe(
      denied(join(main, "wt", ".git")),
    );
  });

  it("write and edit refuse git control paths at any depth: nested .git, commondir, gitdir, info/attributes, bare gitdirs", async () => {
    const workspace = repo();
    mkdirSync(join(workspace, "vendor", "lib"), { recursive: true });
    git(join(workspace, "vendor", "lib"), "init", "-q");
    git(workspace, "init", "-q", "--bare", "store.git");
    const { tool } = setup(workspace);
    for (const path of [
      "vendor/lib/.git/config",
      "vendor/lib/.git/hooks/post-checkout",
      "vendor/lib/.git/config.worktree",
      "x/y/.git/config",
      "x/.git",
      ".git/commondir",
      ".git/info/attributes",
      ".git/worktrees/w/gitdir",
      ".git/modules/m/config",
      "store.git/config",
      "store.git/hooks/pre-receive",
    ]) {
      expect(
        await tool("write", { file_path: path, content: "[core]\n\tfsmonitor = touch /tmp/x\n" }),
        path,
      ).toBe(denied(join(workspace, path)));
    }
    await tool("read", { file_path: "vendor/lib/.git/config" });
    expect(
      await tool("edit", {
        file_path: "vendor/lib/.git/config",
        old_string: "[core]",
        new_string: "[core]\n\tfsmonitor = touch /tmp/x",
      }),
    ).toBe(denied(join(workspace, "vendor/lib/.git/config")));
    expect(existsSync(join(workspace, "x"))).toBe(false);
    expect(existsSync(join(workspace, ".git", "commondir"))).toBe(false);
    expect(readFileSync(join(workspace, "vendor", "lib", ".git", "config"), "utf8")).not.toContain(
      "fsmonitor",
    );
  });

  it("finds every gitdir at any depth, dependency trees included, and says when the walk was cut", () => {
    const workspace = repo();
    for (const dir of ["a/b/c", "node_modules/pkg"]) {
      mkdirSync(join(workspace, dir), { recursive: true });
      git(join(workspace, dir), "init", "-q");
    }
    const paths = protectedPaths(workspace);
    expect(paths.complete).toBe(true);
    expect(paths.pins).toEqual(
      expect.arrayContaining([
        join(workspace, ".git"),
        join(workspace, "a/b/c/.git"),
        join(workspace, "node_modules/pkg/.git"),
      ]),
    );
    const list = paths.paths.map((p) => p.path);
    expect(list).toContain(join(workspace, "node_modules/pkg/.git/config"));
    expect(list).toContain(join(workspace, "a/b/c/.git/hooks"));
    expect(list).toContain(join(workspace, "a/b/c/.git/info/attributes"));
    // A source folder that happens to look like a gitdir is still walked below.
    for (const name of ["objects", "refs/deep"]) mkdirSync(join(workspace, "odd", name), { recursive: true });
    writeFileSync(join(workspace, "odd", "HEAD"), "ref: refs/heads/main\n");
    git(join(workspace, "odd", "refs", "deep"), "init", "-q");
    const odd = protectedPaths(workspace);
    expect(odd.gitdirs).toContain(join(workspace, "odd"));
    expect(odd.pins).toContain(join(workspace, "odd/refs/deep/.git"));
    expect(findGitDirs(workspace, 3).complete).toBe(false);
  });

  describe.skipIf(!bubblewrapAvailable())("under bubblewrap", () => {
    it("git add and git commit work; hooks, config and .bdsh are read-only and .git cannot be replaced", async () => {
      const workspace = repo();
      const config = readFileSync(join(workspace, ".git", "config"), "utf8");
      const { tool } = setup(workspace);
      const commit = await tool("bash", {
        command:
          "echo b > b.txt && git add b.txt && git -c user.name=t -c user.email=t@example.invalid commit -q -m second && git log --oneline | wc -l",
      });
      expect(commit).toBe("2");

      const marker = "[sandbox: file access denied under workspace-write mode]";
      for (const command of [
        "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit",
        "echo '[core]' >> .git/config",
        "mkdir -p .bdsh/plugins && echo 'export default {}' > .bdsh/plugins/x.mjs",
        "mv .git g2",
        "rm -rf .git/hooks",
        "mv .git/config .git/config.old",
      ]) {
        const text = await tool("bash", { command });
        expect(text, command).toContain(marker);
      }
      const configured = await tool("bash", { command: "git config core.hooksPath /tmp/evil" });
      expect(configured).toContain("[exit code:");
      expect(readFileSync(join(workspace, ".git", "config"), "utf8")).toBe(config);
      expect(existsSync(join(workspace, ".git", "hooks", "pre-commit"))).toBe(false);
      expect(existsSync(join(workspace, ".bdsh", "plugins"))).toBe(false);
      expect(existsSync(join(workspace, "g2"))).toBe(false);
      expect(git(workspace, "log", "--oneline").trim().split("\n")).toHaveLength(2);
      // The read-only mount points made for the commands are gone with them: no empty .bdsh/ or config.worktree.
      expect(existsSync(join(workspace, ".bdsh"))).toBe(false);
      expect(existsSync(join(workspace, ".git", "config.worktree"))).toBe(false);
    });

    it("a .bdsh/ mount point outlives the command that made it while another still runs; a person's .bdsh/ stays", async () => {
      const workspace = repo();
      const { tool } = setup(workspace);
      const waitFor = (name: string) => `touch ${name}-started; while [ ! -e ${name} ]; do sleep 0.02; done`;
      // The first command makes the mount point; the second binds it too; the first ends before the second writes.
      const first = tool("bash", { command: `${waitFor("go1")}; echo first` });
      await waitUntil(() => existsSync(join(workspace, "go1-started")), "the first command to start");
      const second = tool("bash", { command: `${waitFor("go2")}; mkdir -p .bdsh/plugins && echo written` });
      await waitUntil(() => existsSync(join(workspace, "go2-started")), "the second command to start");
      writeFileSync(join(workspace, "go1"), "");
      expect(await first).toBe("first");
      expect(existsSync(join(workspace, ".bdsh"))).toBe(true); // still the second command's read-only mount
      writeFileSync(join(workspace, "go2"), "");
      const text = await second;
      expect(text).toContain("[sandbox: file access denied under workspace-write mode]");
      expect(text).not.toContain("written");
      expect(existsSync(join(workspace, ".bdsh"))).toBe(false);
      // A .bdsh/ the person made is theirs: bound read-only, and left in place.
      mkdirSync(join(workspace, ".bdsh"));
      expect(await tool("bash", { command: "touch .bdsh/x" })).toContain("[sandbox: file access denied");
      expect(existsSync(join(workspace, ".bdsh"))).toBe(true);
    });

    it("a nested repository's hooks and config and its .git are read-only to commands too", async () => {
      const workspace = repo();
      mkdirSync(join(workspace, "vendor", "lib"), { recursive: true });
      git(join(workspace, "vendor", "lib"), "init", "-q");
      const config = readFileSync(join(workspace, "vendor", "lib", ".git", "config"), "utf8");
      const { tool } = setup(workspace);
      const marker = "[sandbox: file access denied under workspace-write mode]";
      for (const command of [
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> vendor/lib/.git/config",
        "printf '#!/bin/sh\\n' > vendor/lib/.git/hooks/post-checkout",
        "mv vendor/lib/.git vendor/lib/g2",
        "printf 'x' > vendor/lib/.git/info/attributes",
      ]) {
        expect(await tool("bash", { command }), command).toContain(marker);
      }
      expect(readFileSync(join(workspace, "vendor", "lib", ".git", "config"), "utf8")).toBe(config);
    });
  });
});
