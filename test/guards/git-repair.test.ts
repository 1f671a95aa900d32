/**
 * The after-command check of git's control files (issue 30 item 3), on its own: what a command leaves is
 * compared with what was there before it, and only the new or changed is repaired.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repairGitControl, snapshotGitControl } from "../../src/guards/git-repair/git-control-check.js";
import { tempDir } from "../tools/support.js";

const env = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, env, stdio: "pipe" }).toString();

/** Runs `change` as a command would, between the two snapshots. */
function around(workspace: string, change: () => void) {
  const before = snapshotGitControl(workspace);
  change();
  return repairGitControl(before.workspace, before, snapshotGitControl(workspace));
}

describe("issue 30: the after-command git check", () => {
  it("removes only the program-running settings of a new config and keeps the original beside it", () => {
    const workspace = tempDir("bdsh-repair-");
    const repairs = around(workspace, () => {
      git(workspace, "init", "-q");
      for (const [key, value] of [
        ["core.fsmonitor", "touch /tmp/x"],
        ["include.path", "../evil.cfg"],
        ["alias.st", "!touch /tmp/x"],
        ["filter.x.smudge", "./s"],
        ["user.name", "Kept"],
      ] as const)
        git(workspace, "config", key, value);
    });
    const config = join(workspace, ".git", "config");
    expect(repairs).toEqual([
      {
        path: config,
        action: "settings-removed",
        settings: ["core.fsmonitor", "include.path", "alias.st", "filter.x.smudge"],
        quarantine: `${config}.bdsh-quarantine`,
      },
    ]);
    expect(git(workspace, "config", "--file", config, "--list")).toContain("user.name=Kept");
    expect(readFileSync(config, "utf8")).not.toMatch(/fsmonitor|include|alias|smudge/);
    expect(readFileSync(`${config}.bdsh-quarantine`, "utf8")).toContain("fsmonitor");
  });

  it("leaves a setting made before the command alone (the user's own)", () => {
    const workspace = tempDir("bdsh-repair-");
    git(workspace, "init", "-q");
    git(workspace, "config", "core.pager", "less");
    expect(around(workspace, () => writeFileSync(join(workspace, "a.txt"), "a"))).toEqual([]);
    expect(git(workspace, "config", "core.pager").trim()).toBe("less");
  });

  it("moves a new hook aside and leaves the samples", () => {
    const workspace = tempDir("bdsh-repair-");
    git(workspace, "init", "-q");
    const hook = join(workspace, ".git", "hooks", "post-checkout");
    const repairs = around(workspace, () => {
      writeFileSync(hook, "#!/bin/sh\ntouch /tmp/x\n");
      chmodSync(hook, 0o755);
    });
    expect(repairs.map((r) => [r.path, r.action])).toEqual([[hook, "quarantined"]]);
    expect(existsSync(hook)).toBe(false);
    expect(existsSync(`${hook}.bdsh-quarantine`)).toBe(true);
    expect(existsSync(join(workspace, ".git", "hooks", "pre-commit.sample"))).toBe(true);
  });

  it("a new commondir leading to a config outside the workspace is moved aside; that config is untouched", () => {
    const outside = tempDir("bdsh-repair-outside-");
    git(outside, "init", "-q", "--bare", "evil.git");
    git(join(outside, "evil.git"), "config", "core.fsmonitor", "touch /tmp/x");
    const workspace = tempDir("bdsh-repair-");
    git(workspace, "init", "-q");
    const pointer = join(workspace, ".git", "commondir");
    const repairs = around(workspace, () => writeFileSync(pointer, `${join(outside, "evil.git")}\n`));
    expect(repairs.map((r) => [r.path, r.action, r.settings])).toEqual([
      [pointer, "quarantined", ["core.fsmonitor"]],
    ]);
    expect(existsSync(pointer)).toBe(false);
    expect(readFileSync(join(outside, "evil.git", "config"), "utf8")).toContain("fsmonitor");
  });

  it("a new config git cannot read is moved aside whole", () => {
    const workspace = tempDir("bdsh-repair-");
    const repairs = around(workspace, () => {
      mkdirSync(join(workspace, "sub"));
      git(join(workspace, "sub"), "init", "-q");
      writeFileSync(join(workspace, "sub", ".git", "config"), "[core\n\tfsmonitor = x\n");
    });
    const config = join(workspace, "sub", ".git", "config");
    expect(repairs.map((r) => [r.path, r.action])).toEqual([[config, "quarantined"]]);
    expect(existsSync(config)).toBe(false);
  });
});
