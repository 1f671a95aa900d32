import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { ScriptedApprovals } from "../../src/tools/approvals.js";
import { createBashTool } from "../../src/tools/bash/bash-tool.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { bubblewrapAvailable } from "../../src/tools/terminal/bubblewrap.js";
import { LocalEnvironment } from "../../src/tools/terminal/local.js";
import type { SandboxMode } from "../../src/tools/types.js";
import { call, makeExec, tempDir } from "./support.js";

const outside = tempDir("bdsh-outside-", "/var/tmp");
afterAll(() => rmSync(outside, { recursive: true, force: true }));

function run(
  args: Record<string, unknown>,
  options: { sandbox?: SandboxMode; env?: NodeJS.ProcessEnv; useBubblewrap?: boolean } = {},
) {
  const workspace = tempDir();
  const ctx = makeExec(
    { workspace, sandbox: options.sandbox ?? "danger-full-access" },
    options.env || options.useBubblewrap !== undefined
      ? {
          terminal: new LocalEnvironment({
            cwd: workspace,
            stripEnvKeys: ["CUSTOM_SECRET"],
            ...(options.env ? { baseEnv: options.env } : {}),
            ...(options.useBubblewrap !== undefined ? { useBubblewrap: options.useBubblewrap } : {}),
          }),
        }
      : {},
  );
  const registry = new ToolRegistry();
  registry.register(createBashTool({ timeoutMs: 60_000, maxTimeoutMs: 600_000, maxOutputBytes: 1_000 }));
  const pipeline = new ToolPipeline({ registry, hooks: new HookBus() });
  return {
    ctx,
    workspace,
    output: () => pipeline.run(call("bash", { description: "test", ...args }), ctx.exec),
  };
}

describe("T7 bash result format", () => {
  it("returns stdout, then [stderr], and no exit code when zero", async () => {
    const { output } = run({ command: "echo out; echo err >&2" });
    expect((await output()).text).toBe("out\n[stderr]\nerr");
  });

  it("says (no output) and reports a non-zero exit without being an error", async () => {
    const result = await run({ command: "exit 3" }).output();
    expect(result.text).toBe("(no output)\n[exit code: 3]");
    expect(result.isError).toBeUndefined();
  });

  it("sets NO_COLOR, TERM, PAGER and GIT_PAGER", async () => {
    const { output } = run({ command: 'echo "$NO_COLOR $TERM $PAGER $GIT_PAGER"' });
    expect((await output()).text).toBe("1 dumb cat cat");
  });

  it("keeps the tail and stores the full output", async () => {
    const { output, ctx } = run({ command: "seq 1 2000" });
    const text = (await output()).text;
    expect(text).toMatch(/\n2000\n\[output truncated; full output: spill:\/\/[0-9a-f-]+\]$/);
    expect(text.startsWith("1\n")).toBe(false);
    const id = /spill:\/\/([0-9a-f-]+)/.exec(text)?.[1] ?? "";
    expect((await ctx.blobs.getBlob(id))?.content.toString().split("\n").length).toBe(2001);
  });

  it("reports the signal that killed the command", async () => {
    // Outside bwrap: inside it, bwrap's init turns a signalled command into exit code 128+n (issue 14:
    // danger-full-access runs under bwrap too when it is available).
    const { output } = run({ command: "kill -9 $$" }, { useBubblewrap: false });
    expect((await output()).text).toBe("(no output)\n[killed by signal: SIGKILL]");
  });

  it("runs in workdir", async () => {
    const { output, workspace } = run({ command: "pwd", workdir: "sub" });
    mkdirSync(join(workspace, "sub"));
    expect((await output()).text).toBe(join(workspace, "sub"));
  });
});

describe("T8 timeout moves the command to a background job", () => {
  it("reports the job and keeps it running", async () => {
    // 2 s, not less: `echo started` inside the sandbox must have printed before the timeout, and a loaded CI
    // machine once took longer than 200 ms to start it.
    const { output, ctx } = run({ command: "echo started; sleep 30", timeout_ms: 2_000 });
    const text = (await output()).text;
    expect(text).toMatch(
      /^started\n\[still running after 2000ms; moved to background job (job_[0-9a-f]+)\]\nThe command keeps running in the background\. You will be notified when it finishes; read newer output with job_output, stop it with job_kill\.$/,
    );
    const id = /background job (job_[0-9a-f]+)/.exec(text)?.[1] ?? "";
    expect(ctx.jobs.get(id)?.state).toBe("running");
    await ctx.jobs.kill(id);
    expect(ctx.notices).toEqual([]);
  });

  it("kills it with the timed-out marker when there is no job store", async () => {
    const { ctx } = run({});
    const workspace = ctx.exec.workspace;
    const noJobs = makeExec({ workspace, sandbox: "danger-full-access" });
    const registry = new ToolRegistry();
    registry.register(createBashTool());
    noJobs.services.set("jobs", undefined as never);
    const pipeline = new ToolPipeline({ registry, hooks: new HookBus() });
    const out = await pipeline.run(
      call("bash", { description: "t", command: "sleep 30", timeout_ms: 100 }),
      noJobs.exec,
    );
    expect(out.text).toBe("(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]");
  });
});

describe("issue 5 item 3: secrets never reach a child", () => {
  it("strips provider keys, *_API_KEY and strip_env_keys from env output", async () => {
    const canary = "canary-7f3a9c";
    const env = {
      PATH: process.env.PATH,
      DEEPSEEK_API_KEY: canary,
      OPENAI_API_KEY: canary,
      SOME_VENDOR_API_KEY: canary,
      DATABASE_URL: `postgres://u:${canary}@h/db`,
      BDSH_SERVER_TOKEN: canary,
      CUSTOM_SECRET: canary,
      // Issue 14 finding 4: the default name patterns.
      AWS_SECRET_ACCESS_KEY: canary,
      GITHUB_TOKEN: canary,
      MY_PASSWORD: canary,
      GOOGLE_APPLICATION_CREDENTIALS: canary,
      NPM_TOKEN: canary,
      HARMLESS: "visible",
    };
    for (const sandbox of ["danger-full-access", "workspace-write"] as const) {
      const text = (await run({ command: "env" }, { env, sandbox }).output()).text;
      expect(text).not.toContain(canary);
      expect(text).toContain("HARMLESS=visible");
    }
  });
});

describe.skipIf(!bubblewrapAvailable())("T17 sandbox escapes under bwrap", () => {
  it("runs under bwrap in workspace-write", async () => {
    const result = await run({ command: "touch inside && echo ok" }, { sandbox: "workspace-write" }).output();
    expect(result.text).toBe("ok");
    expect(result.metadata?.sandboxed).toBe(true);
  });

  const escapes: [string, string][] = [
    ["an absolute path outside the workspace", `echo x > ${outside}/abs`],
    ["a symlink out of the workspace", `ln -s ${outside} link && echo x > link/via-link`],
    ["..", `echo x > ../../../..${outside}/dotdot`],
    ["/proc/self/cwd", `cd ${outside}; echo x > /proc/self/cwd/proc-cwd; echo x > /proc/1/cwd/proc-one`],
  ];
  for (const [name, command] of escapes) {
    it(`blocks a write via ${name} with the denial marker`, async () => {
      const result = await run({ command }, { sandbox: "workspace-write" }).output();
      expect(readdirNames(outside)).toEqual([]);
      expect(result.text).toContain("[sandbox: file access denied under workspace-write mode]");
      expect(result.text).toContain("[sandbox: escalation available");
    });
  }

  it("read-only mode refuses writes inside the workspace too", async () => {
    const { output, workspace } = run({ command: "echo x > inside" }, { sandbox: "read-only" });
    const result = await output();
    expect(existsSync(join(workspace, "inside"))).toBe(false);
    expect(result.text).toContain("[sandbox: file access denied under read-only mode]");
  });

  it("escalates with approval, and reports a rejected escalation", async () => {
    const target = join(outside, "escalated");
    for (const answer of ["allow-once", "deny"] as const) {
      const { ctx, output } = run(
        { command: `echo x > ${target}`, sandbox_permissions: "danger-full-access", justification: "test" },
        { sandbox: "workspace-write" },
      );
      ctx.services.set("approvals", new ScriptedApprovals(() => answer));
      const result = await output();
      if (answer === "allow-once") {
        expect(readFileSync(target, "utf8")).toBe("x\n");
        rmSync(target);
      } else {
        expect(result.text).toBe(
          'Error: the user rejected escalating this command to "danger-full-access"; it stays denied, so stop and explain instead of working around it',
        );
      }
    }
  });

  it("does not follow a pre-existing symlink out of a read-write workspace", async () => {
    const { workspace, output } = run({ command: "echo x > escape/file" }, { sandbox: "workspace-write" });
    symlinkSync(outside, join(workspace, "escape"));
    await output();
    expect(readdirNames(outside)).toEqual([]);
  });
});

function readdirNames(dir: string): string[] {
  return readdirSync(dir);
}
