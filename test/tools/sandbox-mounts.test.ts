/**
 * Issue 14 findings 3, 4, 5 under real bubblewrap: `$BDSH_HOME` hidden, the harness's `/proc/<pid>/environ`
 * unreachable in every mode, no vanishing tmpfs (a write outside the writable roots fails with the T17
 * marker), a per-session `$TMPDIR` that outlives the agent's close, and the runtime-context facts.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { commandSandboxFact } from "../../src/context/runtime-context.js";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { ESCALATION_HINT } from "../../src/tools/bash/bash-result.js";
import { createBashTool } from "../../src/tools/bash/bash-tool.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { bubblewrapAvailable } from "../../src/tools/terminal/bubblewrap.js";
import { LocalEnvironment } from "../../src/tools/terminal/local.js";
import type { ApprovalPolicy, SandboxMode } from "../../src/tools/types.js";
import { call, makeExec, tempDir } from "./support.js";

const MODES: SandboxMode[] = ["read-only", "workspace-write", "danger-full-access"];
const home = tempDir("bdsh-home-", "/var/tmp");
writeFileSync(join(home, "state.db"), "home-secret-contents");
afterAll(() => rmSync(home, { recursive: true, force: true }));

function setup(
  mode: SandboxMode,
  options: { useBubblewrap?: boolean; approval?: ApprovalPolicy; sessionId?: string } = {},
) {
  const workspace = tempDir("bdsh-mounts-");
  const terminal = new LocalEnvironment({
    cwd: workspace,
    stripEnvKeys: [],
    home,
    sessionId: options.sessionId ?? "sess-1",
    ...(options.useBubblewrap !== undefined ? { useBubblewrap: options.useBubblewrap } : {}),
  });
  const ctx = makeExec({ workspace, sandbox: mode, approval: options.approval ?? "ask" }, { terminal });
  const registry = new ToolRegistry();
  registry.register(createBashTool({ timeoutMs: 60_000, maxTimeoutMs: 600_000, maxOutputBytes: 100_000 }));
  const pipeline = new ToolPipeline({ registry, hooks: new HookBus() });
  const bash = async (command: string) =>
    (await pipeline.run(call("bash", { description: "t", command }), ctx.exec)).text;
  return { workspace, terminal, bash };
}

/**
 * /proc/<pid>/environ shows a process's initial environment, so the canary must be in the harness's own
 * environment from its start: a real Node process (tsx) holds it and runs the command through
 * LocalEnvironment, the way `bdsh run` does.
 */
function harnessRun(mode: SandboxMode, canary: string, useBubblewrap: boolean): string {
  const dir = tempDir("bdsh-harness-");
  const script = join(dir, "harness.mts");
  const local = join(process.cwd(), "src/tools/terminal/local.ts");
  writeFileSync(
    script,
    `import { LocalEnvironment } from ${JSON.stringify(local)};
const [dir, mode, command, bwrap] = process.argv.slice(2);
const env = new LocalEnvironment({ cwd: dir, stripEnvKeys: [], useBubblewrap: bwrap === "yes" });
const sandbox = { mode, workspace: dir };
const result = await env.execute(command, { cwd: dir, timeoutMs: 30000, sandbox });
await env.cleanup();
process.stdout.write(result.stdout + result.stderr);
`,
  );
  try {
    return execFileSync(
      join(process.cwd(), "node_modules/.bin/tsx"),
      [script, dir, mode, "cat /proc/$PPID/environ; cat /proc/*/environ", useBubblewrap ? "yes" : "no"],
      {
        env: { ...process.env, DEEPSEEK_API_KEY: canary },
        encoding: "latin1",
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!bubblewrapAvailable())("issue 14 findings 3-5 under bubblewrap", () => {
  const canary = `sk-canary-${randomBytes(8).toString("hex")}`;

  it("finding 4: no child reads the harness's environment through /proc, in every mode", () => {
    for (const mode of MODES) expect(harnessRun(mode, canary, true), mode).not.toContain(canary);
  });

  it("control: without bubblewrap the same command does read it (the attack the sandbox stops)", () => {
    expect(harnessRun("danger-full-access", canary, false)).toContain(canary);
  });

  it("finding 3: $BDSH_HOME is hidden and read-only in read-only and workspace-write", async () => {
    for (const mode of ["read-only", "workspace-write"] as const) {
      const { bash } = setup(mode);
      const text = await bash(`cat ${home}/state.db; ls -A ${home}; echo x > ${home}/planted`);
      expect(text, mode).not.toContain("home-secret-contents");
      expect(text, mode).toContain("No such file or directory");
      expect(text, mode).toContain(`[sandbox: file access denied under ${mode} mode]`);
    }
    expect(readdirSync(home)).toEqual(["state.db"]);
  });

  it("finding 5: writes to /tmp, via cd .., and to /dev fail visibly with the T17 marker", async () => {
    const probe = `/tmp/bdsh-probe-${randomBytes(4).toString("hex")}`;
    const { workspace, bash } = setup("workspace-write");
    for (const command of [
      `echo x > ${probe}`,
      "cd .. && touch escaped-by-dotdot",
      "echo x > /dev/planted",
    ]) {
      const text = await bash(command);
      expect(text, command).toContain("[sandbox: file access denied under workspace-write mode]");
      expect(text, command).toContain(ESCALATION_HINT);
      expect(text, command).toContain("[exit code: 1]");
    }
    expect(existsSync(probe)).toBe(false);
    expect(existsSync(join(workspace, "..", "escaped-by-dotdot"))).toBe(false);
  });

  it("finding 5: the marker has no escalation line under approval never", async () => {
    const { bash } = setup("workspace-write", { approval: "never" });
    const text = await bash("rm -f /etc/hostname");
    expect(text).toContain("[sandbox: file access denied under workspace-write mode]");
    expect(text).not.toContain("escalation available");
  });

  it("a command killed the moment it starts ends with its whole sandbox", async () => {
    // The outer bwrap could die before the sandbox's init armed --die-with-parent; `sleep` then outlived
    // the kill and held the pipes open until it finished (the jobs tests' 30 s timeouts).
    const workspace = tempDir("bdsh-kill-");
    const terminal = new LocalEnvironment({ cwd: workspace, stripEnvKeys: [], graceMs: 60_000 });
    const marker = 600 + Math.floor(Math.random() * 1000);
    for (let i = 0; i < 20; i += 1) {
      const running = terminal.spawn(`sleep ${marker}.${i}`, {
        cwd: workspace,
        sandbox: { mode: "workspace-write", workspace },
      });
      const status = await running.kill();
      expect(status.exitCode === null || status.signal !== null || status.exitCode !== 0).toBe(true);
    }
    const survivors = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })
      .split("\n")
      .filter((line) => line.includes(`sleep ${marker}.`));
    expect(survivors).toEqual([]);
    await terminal.cleanup();
  });

  it("finding 5: $TMPDIR is a per-session host directory, kept across commands and past close", async () => {
    for (const mode of MODES) {
      const { terminal, bash } = setup(mode);
      expect(await bash('echo kept > "$TMPDIR/a" && echo "$TMPDIR"')).toBe(terminal.tempDir);
      expect(await bash('cat "$TMPDIR/a"')).toBe("kept");
      const dir = terminal.tempDir;
      expect(dir).toMatch(/\/bdsh-sessions-\d+\/sess-1-[0-9a-f]{8}$/);
      expect(existsSync(join(dir, "a"))).toBe(true);
      await terminal.cleanup();
      // The session's, not this process's: another server may drive the session now (session-temp-dir.ts).
      expect(existsSync(join(dir, "a"))).toBe(true);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a sandboxed command cannot reach another session's $TMPDIR, whose path it can work out", async () => {
    // The path is predictable (session and workspace): what keeps it private is the sandbox, which makes
    // only the command's own session dir writable.
    const other = setup("workspace-write", { sessionId: "sess-other" });
    await other.bash('echo mine > "$TMPDIR/own"');
    const { terminal, bash } = setup("workspace-write", { sessionId: "sess-hostile" });
    for (const command of [
      `echo planted > ${other.terminal.tempDir}/planted`,
      `rm -f ${other.terminal.tempDir}/own`,
      `ln -s /etc ${other.terminal.tempDir}/link`,
    ]) {
      const text = await bash(command);
      expect(text, command).toContain("[sandbox: file access denied under workspace-write mode]");
    }
    expect(readdirSync(other.terminal.tempDir)).toEqual(["own"]);
    await terminal.cleanup();
    await other.terminal.cleanup();
  });
});

describe("finding 4/5: the runtime context states the command sandbox", () => {
  it("says what is private, and plainly when there is no OS sandbox", () => {
    const withBwrap = commandSandboxFact("workspace-write", true, "/tmp/bdsh-s-x");
    expect(withBwrap).toContain('"/tmp/bdsh-s-x"');
    expect(withBwrap).toContain("bubblewrap");
    expect(withBwrap).toContain("/tmp included, is read-only");
    const without = commandSandboxFact("workspace-write", false, "/tmp/bdsh-s-x");
    expect(without).toContain("WITHOUT an OS sandbox");
    expect(without).toContain("only the harness's file-tool checks apply");
  });
});
