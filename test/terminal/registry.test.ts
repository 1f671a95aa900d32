/**
 * Issue 19: the provider registry (Hermes terminal environment provider contract, seed 000) and the
 * docker backend without a daemon: fail-soft traits, unknown createEnvironment keys, per-session sandbox
 * identity, the reserved names this build lacks, docker command lines, env stripping and availability.
 * Docker itself runs only when a daemon is reachable (skipped here otherwise, with the reason).
 */
import { spawnSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { CommandGuard } from "../../src/tools/guards/command-guard.js";
import { ServiceMap } from "../../src/tools/services.js";
import {
  type CreateEnvironmentOptions,
  TerminalBackendRegistry,
  type TerminalEnvironmentProvider,
} from "../../src/tools/terminal/environment.js";
import { globToRegExp } from "../../src/tools/terminal/exec-files.js";
import { localBackend } from "../../src/tools/terminal/local.js";
import {
  containerName,
  DockerEnvironment,
  dockerDaemonHint,
  dockerExecArgs,
  dockerProvider,
  dockerRunArgs,
  dockerSettings,
  orphanedContainers,
  ownerLabel,
  sweepOrphanedContainers,
} from "../../src/tools/terminal/providers/docker.js";
import { builtinRegistry, NOT_IN_BUILD } from "../../src/tools/terminal/providers/index.js";
import { knownHostsVerdict } from "../../src/tools/terminal/providers/ssh.js";
import { PID_MARKER, wrapRemoteCommand } from "../../src/tools/terminal/remote-shell.js";
import type { PreExecuteState } from "../../src/tools/types.js";

function recordingProvider(name: string, extra: Partial<TerminalEnvironmentProvider> = {}) {
  const seen: CreateEnvironmentOptions[] = [];
  const provider: TerminalEnvironmentProvider = {
    name,
    createEnvironment: (options) => {
      seen.push(options);
      return { execute: async () => ({ output: "", exitCode: 0 }) };
    },
    ...extra,
  };
  return { provider, seen };
}

describe("the provider registry (Hermes terminal-environment contract)", () => {
  it("reads every attribute fail-soft: a throwing one counts as its default", () => {
    const registry = new TerminalBackendRegistry();
    const throwing: TerminalEnvironmentProvider = {
      name: "flaky",
      get isRemote(): boolean {
        throw new Error("x");
      },
      get skipContainerGuards(): boolean {
        throw new Error("x");
      },
      get stripEnvKeys(): string[] {
        throw new Error("x");
      },
      isAvailable: () => {
        throw new Error("x");
      },
      probe: () => {
        throw new Error("x");
      },
      createEnvironment: () => ({ execute: async () => ({ output: "", exitCode: 0 }) }),
    };
    registry.register(throwing);
    expect(registry.traits("flaky")).toMatchObject({
      isRemote: false,
      skipContainerGuards: false,
      stripEnvKeys: [],
    });
    const [listed] = registry.list();
    expect(listed).toMatchObject({ available: false, probe: { ok: false, detail: "probe failed" } });
  });

  it("a throwing skipContainerGuards keeps the dangerous-command guard on; a true one skips it", async () => {
    const guard = new CommandGuard({ allowlist: [] });
    guard.install(new HookBus());
    const state = (skip: () => boolean): PreExecuteState => {
      const registry = new TerminalBackendRegistry();
      registry.register({
        name: "box",
        get skipContainerGuards() {
          return skip();
        },
        createEnvironment: () => ({ execute: async () => ({ output: "", exitCode: 0 }) }),
      });
      const terminal = registry.create("box", { cwd: tmpdir(), stripEnvKeys: [] });
      return {
        call: { callId: "c", name: "bash", rawArguments: "", args: { command: "rm -rf /" } },
        tool: undefined,
        exec: { services: new ServiceMap({ terminal }) } as never,
        decision: { kind: "allow" },
      };
    };
    const thrown = await guard.decide(
      state(() => {
        throw new Error("boom");
      }),
    );
    expect(thrown.decision.kind).toBe("ask");
    expect((await guard.decide(state(() => true))).decision.kind).toBe("allow");
  });

  it("createEnvironment gets cwd, timeout, taskId, image, containerConfig and more keys; each session its own identity when not persistent", () => {
    const registry = new TerminalBackendRegistry();
    const isolated = recordingProvider("isolated", { sessionIsolatedWhenNonpersistent: true });
    const shared = recordingProvider("shared");
    registry.register(isolated.provider);
    registry.register(shared.provider);
    const base = { cwd: "/w", stripEnvKeys: [], sessionId: "s1", image: "img", containerConfig: { a: 1 } };
    registry.create("isolated", { ...base, persistent: false, futureKey: "ignored" } as never);
    registry.create("isolated", { ...base, persistent: true });
    registry.create("shared", { ...base, persistent: false });
    expect(isolated.seen[0]).toMatchObject({
      cwd: "/w",
      timeout: 60_000,
      taskId: "s1",
      image: "img",
      containerConfig: { a: 1 },
      futureKey: "ignored",
    });
    expect(isolated.seen[1]?.taskId).toBe("default");
    expect(shared.seen[0]?.taskId).toBe("default");
  });

  it("strips every provider's stripEnvKeys from the children of the selected environment", () => {
    const registry = new TerminalBackendRegistry();
    const box = recordingProvider("box", { stripEnvKeys: ["BOX_SESSION"] });
    registry.register(box.provider);
    registry.register(localBackend, { builtin: true });
    registry.create("box", {
      cwd: "/w",
      stripEnvKeys: ["EXTRA_*"],
      baseEnv: { BOX_SESSION: "v", EXTRA_A: "a", KEEP: "k" },
    });
    expect(box.seen[0]!.stripEnvKeys).toEqual(["EXTRA_*", "BOX_SESSION"]);
    expect(box.seen[0]!.childEnv({ ADDED: "1" })).toEqual({ KEEP: "k", ADDED: "1" });
  });

  it("reserves the built-in names and lists the ones this build lacks as not available", () => {
    const registry = builtinRegistry({ env: { PATH: "" } });
    expect(registry.names()).toEqual(["local", "ssh", "docker", ...NOT_IN_BUILD]);
    for (const name of NOT_IN_BUILD) {
      const listed = registry.list().find((b) => b.name === name)!;
      expect(listed.available).toBe(false);
      expect(listed.probe.detail).toMatch(/not available in this build/);
      expect(registry.doctorChecks(name)[0]?.status).toBe("fail");
      expect(() => registry.create(name, { cwd: "/", stripEnvKeys: [] })).toThrow(
        /not available in this build/,
      );
    }
    expect(() => registry.register({ ...localBackend, name: "modal" })).toThrow(
      /reserved for a built-in backend/,
    );
    const ssh = registry.list().find((b) => b.name === "ssh")!;
    expect(ssh).toMatchObject({
      available: false,
      isRemote: true,
      probe: { detail: "terminal.ssh.host is not set" },
    });
  });
});

describe("the docker backend without a daemon", () => {
  const settings = dockerSettings({
    image: "debian:stable-slim",
    memory: "512m",
    cpus: "1.5",
    pids_limit: 256,
    network: "none",
  });

  it("builds the docker run and exec command lines", () => {
    const name = containerName("/work/ws", "default");
    expect(name).toMatch(/^bdsh-[0-9a-f]{12}-default$/);
    expect(containerName("/work/ws", "session/1")).toMatch(/-session1$/);
    expect(dockerRunArgs({ name, workspace: "/work/ws", settings, persistent: true })).toEqual([
      "run",
      "-d",
      "--name",
      name,
      "--label",
      "bdsh.backend=docker",
      "--mount",
      "type=bind,source=/work/ws,target=/work/ws",
      "-w",
      "/work/ws",
      "--memory",
      "512m",
      "--cpus",
      "1.5",
      "--pids-limit",
      "256",
      "--network",
      "none",
      "--entrypoint",
      "sleep",
      "debian:stable-slim",
      "infinity",
    ]);
    expect(
      dockerRunArgs({ name, workspace: "/w", settings: dockerSettings({}), persistent: false }),
    ).toContain("--rm");
    // A persistent container outlives its process: it is never labelled as one's to sweep.
    expect(
      dockerRunArgs({ name, workspace: "/w", settings, persistent: true, owner: ownerLabel() }).join(" "),
    ).not.toContain("bdsh.owner");
    const exec = dockerExecArgs(name, "echo hi", "/work/ws/sub", { NO_COLOR: "1" });
    expect(exec.slice(0, 5)).toEqual(["exec", "-i", name, "sh", "-c"]);
    expect(exec[5]).toBe(wrapRemoteCommand("echo hi", "/work/ws/sub", { NO_COLOR: "1" }));
    expect(exec).not.toContain("-e"); // no host variable is passed by name
  });

  it("exports only the policy-filtered variables into the container", () => {
    const script = wrapRemoteCommand("env", "/w", { NO_COLOR: "1", "BAD NAME": "x", QUOTE: "it's" });
    expect(script).toContain("export NO_COLOR='1'");
    expect(script).toContain("export QUOTE='it'\\''s'");
    expect(script).not.toContain("BAD NAME");
    // The wrapper itself: run as a process group, report its pid, wait.
    const run = spawnSync("sh", ["-c", script.replace("cd -- '/w'", "cd -- /tmp")], { encoding: "utf8" });
    expect(run.stdout).toContain("NO_COLOR=1");
    expect(run.stderr.startsWith(PID_MARKER)).toBe(true);
  });

  it("strips secrets from the docker CLI's own environment and from what reaches the container", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bdsh-fake-docker-"));
    const log = join(dir, "log");
    // A stand-in docker binary on PATH: records its argv and environment, says the container runs.
    writeFileSync(
      join(dir, "docker"),
      `#!/bin/sh\n{ echo "ARGS $*"; env; } >> ${log}\ncase "$1" in inspect) echo true;; exec) shift 3; exec "$@";; esac\n`,
      { mode: 0o755 },
    );
    const registry = builtinRegistry({ env: { PATH: `${dir}:${process.env.PATH}` } });
    const environment = registry.create("docker", {
      cwd: dir,
      workspace: dir,
      stripEnvKeys: [],
      baseEnv: { PATH: `${dir}:${process.env.PATH}`, OPENAI_API_KEY: "sk-docker-secret-1234", PLAIN: "p" },
      sessionId: "s1",
      persistent: false,
    });
    expect(environment).toBeInstanceOf(DockerEnvironment);
    expect(environment.traits).toMatchObject({ isContainer: true, sessionIsolatedWhenNonpersistent: true });
    const result = await environment.execute("echo inside; env", {
      cwd: dir,
      timeoutMs: 30_000,
      env: { NO_COLOR: "1", MY_TOKEN: "t-should-go" },
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("inside");
    expect(result.stdout).toContain("NO_COLOR=1");
    expect(result.stdout).not.toContain("t-should-go");
    const recorded = readFileSync(log, "utf8");
    expect(recorded).not.toContain("sk-docker-secret-1234");
    // Not persistent: the container is this agent's (the session's name and an instance suffix).
    const name = (environment as DockerEnvironment).name;
    expect(name.startsWith(`${containerName(dir, "s1")}-`)).toBe(true);
    expect(recorded).toContain(`ARGS exec -i ${name} sh -c`);
    await environment.cleanup();
    expect(readFileSync(log, "utf8")).toContain(`ARGS rm -f ${name}`);
  });

  it("gives each agent of a session its own non-persistent container: one closing leaves the other's running", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bdsh-fake-docker-"));
    const log = join(dir, "log");
    writeFileSync(
      join(dir, "docker"),
      `#!/bin/sh\necho "ARGS $*" >> ${log}\ncase "$1" in inspect) exit 1;; exec) shift 3; exec "$@";; esac\n`,
      { mode: 0o755 },
    );
    const registry = builtinRegistry({ env: { PATH: `${dir}:${process.env.PATH}` } });
    const open = () =>
      registry.create("docker", {
        cwd: dir,
        workspace: dir,
        stripEnvKeys: [],
        baseEnv: { PATH: `${dir}:${process.env.PATH}` },
        sessionId: "shared",
        persistent: false,
      }) as DockerEnvironment;
    // A session handed over on one host: the closing agent and the one that took over, both open.
    const closing = open();
    const taking = open();
    expect(closing.name).not.toBe(taking.name);
    await closing.execute("true", { cwd: dir, timeoutMs: 30_000 });
    // Made by `docker run`, labelled with its owner so a crash's leftover can be told apart.
    expect(readFileSync(log, "utf8")).toContain(
      `--name ${closing.name} --label bdsh.backend=docker --rm --label bdsh.owner=${ownerLabel()}`,
    );
    const running = taking.execute("echo still here", { cwd: dir, timeoutMs: 30_000 });
    await closing.cleanup();
    expect((await running).stdout).toContain("still here");
    const lines = readFileSync(log, "utf8").split("\n");
    expect(lines).toContain(`ARGS rm -f ${closing.name}`);
    expect(lines.some((line) => line.startsWith("ARGS rm") && line.includes(taking.name))).toBe(false);
    await taking.cleanup();
    expect(readFileSync(log, "utf8").split("\n")).toContain(`ARGS rm -f ${taking.name}`);
  });

  it("removes the containers a dead process of this host left, and no other", async () => {
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    });
    const deadPid = Number(gone.stdout); // exited (and reaped) before spawnSync returned
    const listing = [
      `bdsh-a-orphan\t${ownerLabel(deadPid)}`,
      `bdsh-b-live\t${ownerLabel(process.ppid)}`,
      `bdsh-c-mine\t${ownerLabel(process.pid)}`,
      `bdsh-d-elsewhere\t${ownerLabel(deadPid, "another-host")}`,
      `bdsh-e-odd\tnot-a-label`,
      "",
    ].join("\n");
    expect(orphanedContainers(listing)).toEqual(["bdsh-a-orphan"]);
    const calls: string[][] = [];
    const removed = await sweepOrphanedContainers(async (args) => {
      calls.push(args);
      return { code: 0, output: args[0] === "ps" ? listing : "" };
    });
    expect(removed).toEqual(["bdsh-a-orphan"]);
    expect(calls.slice(1)).toEqual([["rm", "-f", "bdsh-a-orphan"]]);
    // Only containers this harness labelled are listed.
    expect(calls[0]).toEqual(expect.arrayContaining(["label=bdsh.backend=docker", "label=bdsh.owner"]));
    // A failing `docker ps` (no daemon) removes nothing.
    expect(await sweepOrphanedContainers(async () => ({ code: 1, output: "" }))).toEqual([]);
  });

  it("isAvailable and probe report no daemon cleanly, without running docker", () => {
    expect(dockerDaemonHint({ DOCKER_HOST: "unix:///nonexistent/docker.sock" })).toEqual({
      ok: false,
      detail: "no docker daemon socket at /nonexistent/docker.sock",
    });
    expect(dockerDaemonHint({ DOCKER_HOST: "tcp://10.0.0.1:2375" }).ok).toBe(true);
    const noCli = dockerProvider(settings, { PATH: "/nonexistent" });
    expect(noCli.isAvailable?.()).toBe(false);
    expect(noCli.probe?.()).toEqual({ ok: false, detail: "the docker CLI is not installed" });
    expect(noCli.doctorChecks?.()[0]).toMatchObject({ status: "fail", name: "backend docker" });
  });

  const daemon =
    dockerDaemonHint(process.env).ok && spawnSync("docker", ["info"], { stdio: "ignore" }).status === 0;
  if (!daemon) console.warn("no Docker daemon reachable: the docker backend's container test is skipped");
  it.skipIf(!daemon)(
    "runs a command in a real container with the workspace mounted",
    async () => {
      const workspace = mkdtempSync(join(tmpdir(), "bdsh-docker-ws-"));
      writeFileSync(join(workspace, "f.txt"), "from host\n");
      const environment = builtinRegistry().create("docker", {
        cwd: workspace,
        workspace,
        stripEnvKeys: [],
        sessionId: "dockertest",
        persistent: false,
      });
      const result = await environment.execute("cat f.txt", { cwd: workspace, timeoutMs: 120_000 });
      expect(result.stdout).toBe("from host\n");
      await environment.cleanup();
    },
    180_000,
  );
});

describe("small pieces", () => {
  it("globs like ripgrep's --glob", () => {
    expect(globToRegExp("**/*.ts").test("a/b/c.ts")).toBe(true);
    expect(globToRegExp("**/*.ts").test("c.ts")).toBe(true);
    expect(globToRegExp("*.ts").test("deep/c.ts")).toBe(true);
    expect(globToRegExp("src/*.ts").test("src/deep/c.ts")).toBe(false);
    expect(globToRegExp("*.{js,ts}").test("x.js")).toBe(true);
  });

  it("reads known_hosts entries, plain and hashed, and tells unknown from changed", () => {
    const key = "AAAAC3NzaC1lZDI1NTE5AAAAIKey";
    const salt = Buffer.from("0123456789abcdefghij");
    const hash = createHmac("sha1", salt).update("[h]:2222").digest("base64");
    expect(knownHostsVerdict(`[h]:2222 ssh-ed25519 ${key}\n`, "h", 2222, key)).toBe("known");
    expect(
      knownHostsVerdict(`|1|${salt.toString("base64")}|${hash} ssh-ed25519 ${key}\n`, "h", 2222, key),
    ).toBe("known");
    expect(knownHostsVerdict(`h ssh-ed25519 ${key}\n`, "h", 2222, key)).toBe("unknown");
    expect(knownHostsVerdict(`[h]:2222 ssh-ed25519 OTHER\n`, "h", 2222, key)).toBe("changed");
    expect(knownHostsVerdict(`@revoked [h]:2222 ssh-ed25519 ${key}\n`, "h", 2222, key)).toBe("revoked");
  });
});
