/**
 * Issue 19 acceptance, SSH backend: against a real `sshd` started here on 127.0.0.1 (a free port, fresh
 * host and client keys; sshd.ts). bash, background jobs, read/write/edit/glob/grep run remotely; a
 * connection cut mid-command says so honestly and the next command reconnects; no variable of the
 * harness's environment is visible remotely; host-key checking refuses unknown and changed keys.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { createStandardRegistry } from "../../src/tools/standard.js";
import type { TerminalEnvironment } from "../../src/tools/terminal/environment.js";
import { builtinRegistry } from "../../src/tools/terminal/providers/index.js";
import type { SshEnvironment } from "../../src/tools/terminal/providers/ssh.js";
import { waitUntil } from "../support/wait.js";
import { call, makeExec, tempDir } from "../tools/support.js";
import { SSHD_BINARY, SSHD_MISSING, startSshd, type TestSshd } from "./sshd.js";

const SECRET = "sk-harness-secret-5e2b9d1c";
const PLAIN = "plain-harness-value-7a1f";

if (!SSHD_BINARY) console.warn(SSHD_MISSING);

/** Waits for a condition (no fixed sleep), polling every 20 ms under the scaled guard. */
const until = (condition: () => boolean, what = "the condition"): Promise<unknown> =>
  waitUntil(condition, what, { everyMs: 20 });

describe.skipIf(!SSHD_BINARY)("the ssh backend against a real sshd (T7, T8, T10, T11, T13 remotely)", () => {
  let sshd: TestSshd;
  let remoteDir: string;
  const environments: TerminalEnvironment[] = [];

  beforeAll(async () => {
    sshd = await startSshd();
    remoteDir = tempDir("bdsh-remote-");
  });
  afterAll(async () => {
    for (const environment of environments) await environment.cleanup();
    await sshd?.stop();
  });

  function settings(overrides: Record<string, unknown> = {}) {
    return {
      host: "127.0.0.1",
      port: sshd.port,
      user: sshd.user,
      identity_file: sshd.identityFile,
      known_hosts: sshd.knownHosts,
      cwd: remoteDir,
      ...overrides,
    };
  }

  function setup(overrides: Record<string, unknown> = {}) {
    const local = tempDir("bdsh-local-");
    const registry = builtinRegistry({ ssh: settings(overrides) });
    const terminal = registry.create("ssh", {
      cwd: local,
      stripEnvKeys: [],
      baseEnv: { ...process.env, OPENAI_API_KEY: SECRET, HARNESS_PLAIN: PLAIN },
      sessionId: "session-1",
    });
    environments.push(terminal);
    const ctx = makeExec({ workspace: local, sandbox: "workspace-write" }, { terminal });
    const pipeline = new ToolPipeline({ registry: createStandardRegistry(), hooks: new HookBus() });
    const run = async (name: string, args: Record<string, unknown>) =>
      pipeline.run(call(name, args), ctx.exec);
    return { terminal: terminal as SshEnvironment, run, local };
  }

  it("runs bash remotely on one reused connection, and sends none of the harness's environment", async () => {
    const { terminal, run } = setup();
    const where = await run("bash", { description: "Where am I", command: "pwd; echo $BDSH_SANDBOX" });
    expect(where.text).toBe(`${remoteDir}\nworkspace-write`);
    const env = await run("bash", { description: "Show the environment", command: "env" });
    expect(env.text).toContain("NO_COLOR=1");
    expect(env.text).not.toContain(SECRET);
    expect(env.text).not.toContain(PLAIN);
    const failed = await run("bash", { description: "Fail", command: "echo oops >&2; exit 4" });
    expect(failed.text).toBe("[stderr]\noops\n[exit code: 4]");
    expect(terminal.connections).toBe(1);
    expect((terminal as TerminalEnvironment).traits?.isRemote).toBe(true);
  });

  it("runs background jobs remotely and kills them as a group", async () => {
    const { run } = setup();
    const started = await run("bash", {
      description: "Job",
      command: "echo one; echo two",
      run_in_background: true,
    });
    const id = /started background job (job_[0-9a-f]+)/.exec(started.text)?.[1];
    expect(id).toBeDefined();
    expect((await run("job_output", { job_id: id, wait: true })).text).toBe(
      "one\ntwo\n[status: completed (exit code 0)]",
    );
    const long = await run("bash", { description: "Long", command: "sleep 60", run_in_background: true });
    const longId = /started background job (job_[0-9a-f]+)/.exec(long.text)?.[1];
    expect((await run("job_kill", { job_id: longId })).text).toBe(`killed background job ${longId}`);
    expect((await run("job_list", {})).text).toContain(`${longId} [bash] killed — Long`);
  });

  it("read, write, edit, glob and grep work on the remote files (SFTP), with the sandbox and read-before-write", async () => {
    const { run } = setup();
    const file = join(remoteDir, "src", "notes.txt");
    expect((await run("write", { file_path: "src/notes.txt", content: "alpha\nbeta\n" })).text).toBe(
      `Created file ${file}`,
    );
    expect(readFileSync(file, "utf8")).toBe("alpha\nbeta\n"); // the "remote" host is this one
    const other = join(remoteDir, "other.txt");
    writeFileSync(other, "beta elsewhere\n");
    const blind = await run("edit", { file_path: other, old_string: "beta", new_string: "delta" });
    expect(blind.text).toBe(
      `Error: cannot modify "${other}": file has not been read — read the file, then retry`,
    );
    const read = await run("read", { file_path: "other.txt" });
    expect(read.text).toContain("1: beta elsewhere");
    await run("read", { file_path: file });
    expect((await run("edit", { file_path: file, old_string: "beta", new_string: "gamma" })).text).toBe(
      `The file ${file} has been updated successfully.`,
    );
    expect(readFileSync(file, "utf8")).toBe("alpha\ngamma\n");
    const globbed = await run("glob", { pattern: "**/*.txt" });
    expect(globbed.text.split("\n").sort()).toEqual([other, file].sort());
    const grepped = await run("grep", { pattern: "gam+a" });
    expect(grepped.text).toBe(`${file}:2:gamma`);
    const outside = await run("write", { file_path: "/tmp/bdsh-ssh-outside.txt", content: "x" });
    expect(outside.text).toBe(
      'Error: cannot write "/tmp/bdsh-ssh-outside.txt": [sandbox: file access denied under workspace-write mode]',
    );
    expect(existsSync("/tmp/bdsh-ssh-outside.txt")).toBe(false);
  });

  it("a connection cut mid-command is reported as lost, not as an exit code, and the next command reconnects", async () => {
    const { terminal, run } = setup();
    const marker = join(remoteDir, "started.pid");
    const pending = run("bash", { description: "Sleep", command: `echo $$ > ${marker}; sleep 60` });
    await until(() => existsSync(marker) && readFileSync(marker, "utf8").trim() !== "");
    const remotePid = Number(readFileSync(marker, "utf8").trim());
    // Cut the connection: kill the per-connection sshd processes (the listener stays up).
    for (const pid of sshd.connectionPids()) process.kill(pid, "SIGKILL");
    const result = await pending;
    expect(result.text).toMatch(
      /\[stopped: the SSH connection to .*127\.0\.0\.1.* dropped while the command ran; its outcome is unknown/,
    );
    expect(result.text).not.toContain("[exit code");
    expect(result.metadata?.lost).toBe(true);
    try {
      process.kill(remotePid, "SIGKILL"); // the orphaned remote sleep, by its id
    } catch {}
    expect((await run("bash", { description: "Again", command: "echo back" })).text).toBe("back");
    expect(terminal.connections).toBe(2);
  });

  it("authenticates through the ssh agent when no key file is set, and the agent is not forwarded", async () => {
    const socket = join(tempDir("bdsh-agent-"), "agent.sock");
    const agent = spawn("ssh-agent", ["-D", "-a", socket], { stdio: "ignore" });
    try {
      await until(() => existsSync(socket));
      execFileSync("ssh-add", ["-q", sshd.identityFile], { env: { ...process.env, SSH_AUTH_SOCK: socket } });
      const local = tempDir("bdsh-local-");
      const terminal = builtinRegistry({ ssh: settings({ identity_file: "" }) }).create("ssh", {
        cwd: local,
        stripEnvKeys: [],
        baseEnv: { ...process.env, SSH_AUTH_SOCK: socket },
      });
      environments.push(terminal);
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax run remotely.
      const result = await terminal.execute("echo agent-ok; echo sock=${SSH_AUTH_SOCK:-none}", {
        cwd: remoteDir,
        timeoutMs: 30_000,
      });
      expect(result.output).toBe("agent-ok\nsock=none\n");
    } finally {
      agent.kill("SIGTERM");
    }
  });

  it("host-key checking is on by default: an unknown host and a changed key are refused with a clear message", async () => {
    const empty = join(tempDir("bdsh-kh-"), "known_hosts");
    writeFileSync(empty, "");
    const unknown = setup({ known_hosts: empty });
    const first = await unknown.run("bash", { description: "Try", command: "echo hi" });
    expect(first.text).toMatch(
      /the SSH host key of \[127\.0\.0\.1\]:\d+ \(SHA256:.*\) is not in .*known_hosts: first connection/,
    );
    expect(first.text).toContain("ssh-keyscan");

    const changed = join(tempDir("bdsh-kh-"), "known_hosts");
    const other = join(tempDir("bdsh-key-"), "k");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", other]);
    const otherKey = readFileSync(`${other}.pub`, "utf8").split(" ").slice(0, 2).join(" ");
    writeFileSync(changed, `[127.0.0.1]:${sshd.port} ${otherKey}\n`);
    const mitm = setup({ known_hosts: changed });
    const refused = await mitm.run("bash", { description: "Try", command: "echo hi" });
    expect(refused.text).toMatch(/CHANGED/);

    const off = setup({ known_hosts: empty, strict_host_key_checking: false });
    expect((await off.run("bash", { description: "Try", command: "echo hi" })).text).toBe("hi");
  });
});
