/**
 * The narrow "always" (seed 000's "allow permanently" kept only as a choice that names the key and every
 * project): an exact command approved for one project never approves another command, nor the same one
 * elsewhere; what was stored is listed and revoked with `bdsh approvals`.
 */
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { answerFor, approvalChoices } from "../../src/cli/approval-choices.js";
import { readCommandAllowlist } from "../../src/config/allowlist.js";
import { CommandApprovals, normaliseCommand } from "../../src/config/command-approvals.js";
import { ConfigError } from "../../src/config/load.js";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { ScriptedApprovals } from "../../src/tools/approvals.js";
import { CommandGuard } from "../../src/tools/guards/command-guard.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { ApprovalAnswer } from "../../src/tools/types.js";
import { runCli } from "../support/run-cli.js";
import { call, makeExec } from "../tools/support.js";

const fakeBash = {
  name: "bash",
  toolset: "terminal",
  description: "",
  parameters: {
    type: "object" as const,
    properties: { command: { type: "string" as const } },
    required: ["command"],
  },
  execute: async (args: { command: string }) => ({ text: `ran ${args.command}` }),
};

function place() {
  const root = mkdtempSync(join(tmpdir(), "bdsh-approvals-"));
  const home = join(root, "home");
  const projectA = join(root, "a");
  const projectB = join(root, "b");
  for (const dir of [home, projectA, projectB]) mkdirSync(dir);
  return { root, home, projectA, projectB };
}

/** One agent's guard over `home`'s stored approvals, answering with `answers` in order (then deny). */
function agentIn(home: string, workspace: string, answers: ApprovalAnswer[]) {
  const registry = new ToolRegistry();
  registry.register(fakeBash);
  const hooks = new HookBus();
  new CommandGuard({ allowlist: [], exactCommands: new CommandApprovals(home) }).install(hooks);
  const ctx = makeExec({ workspace });
  const approvals = new ScriptedApprovals(() => answers.shift() ?? "deny");
  ctx.services.set("approvals", approvals);
  const pipeline = new ToolPipeline({ registry, hooks });
  const run = async (command: string) => (await pipeline.run(call("bash", { command }), ctx.exec)).text;
  return { run, approvals };
}

describe("allow this exact command in this project", () => {
  it("approves that command in that project only: a different recursive delete, or the same one in another project, asks again", async () => {
    const { home, projectA, projectB } = place();
    const first = agentIn(home, projectA, ["allow-command"]);
    expect(await first.run("rm -rf build")).toBe("ran rm -rf build");
    expect(first.approvals.requests).toHaveLength(1);

    // A later session in the same project: the same command runs unasked (spacing around it aside)…
    const later = agentIn(home, projectA, []);
    expect(await later.run("  rm -rf build\n")).toBe("ran   rm -rf build\n");
    expect(later.approvals.requests).toHaveLength(0);
    // …a different recursive delete in the same project asks again (and is denied here)…
    expect(await later.run("rm -rf src test .git")).toBe('Error: the user rejected tool "bash"');
    expect(later.approvals.requests.map((r) => r.summary)).toEqual(["rm -rf src test .git"]);
    // …and the approved command in another project asks again too.
    const elsewhere = agentIn(home, projectB, []);
    expect(await elsewhere.run("rm -rf build")).toBe('Error: the user rejected tool "bash"');
    expect(elsewhere.approvals.requests).toHaveLength(1);
    // Nothing broader was written: no pattern key in config.yaml.
    expect(readCommandAllowlist(home)).toEqual([]);
  });

  it("keys the project by its real path: a symlink to the project is the same project", async () => {
    const { root, home, projectA } = place();
    const link = join(root, "link");
    symlinkSync(projectA, link);
    await agentIn(home, projectA, ["allow-command"]).run("rm -rf build");
    const viaLink = agentIn(home, link, []);
    expect(await viaLink.run("rm -rf build")).toBe("ran rm -rf build");
    expect(new CommandApprovals(home).list()).toEqual([
      expect.objectContaining({ project: projectA, command: "rm -rf build", keys: ["recursive-delete"] }),
    ]);
  });

  it("normalises only the whitespace around a command and its line ends", () => {
    expect(normaliseCommand("  rm -rf build \r\n")).toBe("rm -rf build");
    expect(normaliseCommand("rm  -rf build")).toBe("rm  -rf build");
  });

  it("a file that is not approvals allows nothing and is never overwritten", async () => {
    const { home, projectA } = place();
    const file = join(home, "approvals.json");
    writeFileSync(file, "{ not json");
    const agent = agentIn(home, projectA, ["allow-command"]);
    // The approval itself was given for this call; storing it fails, and the file is left as it was.
    await agent.run("rm -rf build").catch(() => undefined);
    expect(readFileSync(file, "utf8")).toBe("{ not json");
    expect(new CommandApprovals(home).allows(projectA, "rm -rf build")).toBe(false);
    expect(() => new CommandApprovals(home).list()).toThrow(ConfigError);
  });
});

describe("the approval prompt's choices", () => {
  it("names the key in the session and permanent choices and says every project for the permanent one", () => {
    const choices = approvalChoices("dangerous command (recursive delete) [recursive-delete]");
    expect(choices.map((c) => `[${c.key}] ${c.label}`)).toEqual([
      "[y] allow once",
      "[c] allow this exact command in this project from now on",
      "[s] allow every `recursive-delete` command in this session",
      "[p] allow every `recursive-delete` command in every project, permanently (command_allowlist)",
      "[n] deny (the default)",
    ]);
    expect(answerFor("c", choices)).toBe("allow-command");
    expect(answerFor("P", choices)).toBe("allow-always");
    // The old "[a]lways" letter approves nothing now; an empty answer is a deny.
    expect(answerFor("a", choices)).toBe("deny");
    expect(answerFor("", choices)).toBe("deny");
  });

  it("offers once or deny for an approval that names no pattern key", () => {
    const choices = approvalChoices("the command asks to leave the sandbox");
    expect(choices.map((c) => c.answer)).toEqual(["allow-once", "deny"]);
  });
});

describe("bdsh approvals", () => {
  it("lists exact commands per project and permanent pattern keys, and revokes each", async () => {
    const { home, projectA } = place();
    const stored = new CommandApprovals(home).add(projectA, "rm -rf build", ["recursive-delete"]);
    writeFileSync(join(home, "config.yaml"), "# mine\ncommand_allowlist:\n  - force-push\n");
    const env = { BDSH_HOME: home };
    const listed = await runCli(["approvals", "list"], env, projectA);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(stored.id);
    expect(listed.stdout).toContain("rm -rf build");
    expect(listed.stdout).toContain(projectA);
    expect(listed.stdout).toContain("force-push");
    expect(listed.stdout).toContain("every project");

    expect((await runCli(["approvals", "revoke", stored.id], env, projectA)).code).toBe(0);
    expect(new CommandApprovals(home).list()).toEqual([]);
    expect((await runCli(["approvals", "revoke", "force-push"], env, projectA)).code).toBe(0);
    expect(readCommandAllowlist(home)).toEqual([]);
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toContain("# mine");

    const unknown = await runCli(["approvals", "revoke", "nothing-here"], env, projectA);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("bdsh: NOT_FOUND:");
  });
});
