/**
 * Issue 19 acceptance (Hermes terminal environment provider plugins, seed 000): a backend plugin in a
 * temporary `$BDSH_HOME/plugins/<name>/` (plugin.yaml + index.mjs) is selected by `terminal.backend` and
 * runs the agent's commands; its `stripEnvKeys` are stripped; its throwing `skipContainerGuards` keeps the
 * dangerous-command guard on; plugins named `local` or `ssh` are rejected with a clear message.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import type { LogEvent } from "../../src/log/events.js";
import { loadPlugins } from "../../src/tools/plugins.js";
import { createStandardRegistry } from "../../src/tools/standard.js";
import { loadBackendPlugins } from "../../src/tools/terminal/backend-plugins.js";
import { builtinRegistry } from "../../src/tools/terminal/providers/index.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { runCli } from "../support/run-cli.js";

const ACME_TOKEN = "acme-token-9f3e1c5b7d";

/** The plugin: runs commands with local bash in the stripped environment the core hands it, logs each. */
const PLUGIN_SOURCE = `
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

class AcmeBoxEnvironment {
  constructor(options) { this.options = options; }
  execute(command, { cwd, env, signal } = {}) {
    appendFileSync(process.env.ACME_LOG, command + "\\n");
    return new Promise((resolve) => {
      const child = spawn("bash", ["-c", command], { cwd: cwd ?? this.options.cwd, env: this.options.childEnv(env), signal });
      let output = "";
      child.stdout.on("data", (c) => (output += c));
      child.stderr.on("data", (c) => (output += c));
      child.on("error", () => {});
      child.on("close", (code) => resolve({ output, exitCode: code }));
    });
  }
  cleanup() {}
}

export function register(ctx) {
  ctx.registerTerminalEnvironmentProvider({
    name: "acmebox",
    displayName: "AcmeBox",
    isRemote: false,
    isContainer: true,
    get description() { return "AcmeBox test sandbox"; },
    get stripEnvKeys() { return ["ACMEBOX_SESSION"]; },
    get skipContainerGuards() { throw new Error("boom"); },
    get envDescription() { return "Commands run in the AcmeBox sandbox."; },
    isAvailable: () => true,
    createEnvironment({ cwd, timeout, taskId, image, containerConfig, ...rest }) {
      return new AcmeBoxEnvironment({ cwd, timeout, taskId, ...rest });
    },
  });
}
`;

function plugin(home: string, name: string, source: string, manifestName = name): string {
  const dir = join(home, "plugins", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "plugin.yaml"),
    `name: ${manifestName}\nversion: 0.1.0\ndescription: test backend\nkind: backend\n`,
  );
  writeFileSync(join(dir, "index.mjs"), source);
  return dir;
}

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe("backend plugins (Hermes terminal-environment contract: stripEnvKeys, skipContainerGuards, reserved names)", () => {
  it("a plugin backend selected by config runs the agent's commands; its strip keys are stripped; a throwing skipContainerGuards keeps the guard", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-home-"));
    const workspace = mkdtempSync(join(tmpdir(), "bdsh-ws-"));
    const log = join(home, "acme.log");
    writeFileSync(log, "");
    plugin(home, "acmebox", PLUGIN_SOURCE);
    writeFileSync(join(home, "config.yaml"), "terminal:\n  backend: acmebox\n");
    fake = await startFakeProvider({
      script: [
        {
          toolCalls: [
            {
              id: "c1",
              name: "bash",
              arguments: { description: "Show where it runs", command: "echo ran-in-acme; env" },
            },
          ],
        },
        {
          toolCalls: [
            {
              id: "c2",
              name: "bash",
              arguments: { description: "Delete everything", command: "rm -rf /tmp/bdsh-never-there" },
            },
          ],
        },
        { text: "done" },
      ],
    });
    const result = await runCli(["run", "--json", "--approval", "never", "--cwd", workspace, "go"], {
      BDSH_HOME: home,
      BDSH_BASE_URL: fake.url,
      DEEPSEEK_API_KEY: "sk-test-0000000000",
      ACME_LOG: log,
      ACMEBOX_SESSION: ACME_TOKEN,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const events = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as LogEvent);
    const results = events.filter((e): e is LogEvent<"tool/result"> => e.type === "tool/result");
    expect(results[0]!.data.text).toContain("ran-in-acme");
    expect(results[0]!.data.text).toContain("NO_COLOR=1");
    // Its own key: stripped from what its environment spawns, unconditionally.
    expect(results[0]!.data.text).not.toContain(ACME_TOKEN);
    expect(readFileSync(log, "utf8")).toContain("echo ran-in-acme; env");
    // The throwing skipContainerGuards counts as false: the dangerous command needed approval, got none.
    expect(results[1]!.data.isError).toBe(true);
    expect(results[1]!.data.text).toMatch(/approval/);
    expect(readFileSync(log, "utf8")).not.toContain("rm -rf");
    // L13: the provider's envDescription reaches the model as runtime context, not in the system prompt.
    const bodies = fake.requests.map((r) => r.rawBody).join("\n");
    expect(bodies).toContain("Terminal backend: acmebox (container). Commands run in the AcmeBox sandbox.");
  });

  it("rejects plugins named local or ssh, a manifest whose name is not its directory's, and loads none from a $BDSH_HOME inside the workspace", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-home-"));
    const source = (name: string) =>
      `export function register(ctx) { ctx.registerTerminalEnvironmentProvider({ name: "${name}", createEnvironment() { throw new Error("no"); } }); }`;
    plugin(home, "local", source("local"));
    plugin(home, "ssh", source("ssh"));
    plugin(home, "wrongname", source("wrongname"), "other");
    plugin(home, "okbox", source("okbox"));
    const registry = builtinRegistry();
    const report = await loadBackendPlugins({
      home,
      workspace: mkdtempSync(join(tmpdir(), "ws-")),
      registry,
    });
    expect(report.loaded.map((l) => l.name)).toEqual(["okbox"]);
    const errors = Object.fromEntries(report.failed.map((f) => [f.name, f.error]));
    expect(errors.local).toMatch(/terminal backend name "local" is reserved for a built-in backend/);
    expect(errors.ssh).toMatch(/terminal backend name "ssh" is reserved/);
    expect(errors.wrongname).toMatch(/plugin.yaml names "other"/);
    expect(registry.get("local")?.displayName).toBe("Local"); // never shadowed

    // $BDSH_HOME inside the workspace: the model could write it, so nothing loads from it.
    const inside = builtinRegistry();
    const again = await loadBackendPlugins({ home, workspace: tmpdir(), registry: inside });
    expect(again.loaded).toEqual([]);
    expect(again.failed.find((f) => f.name === "okbox")?.error).toMatch(/inside the workspace/);
    expect(inside.get("okbox")).toBeUndefined();
  });

  it("a tool plugin registers a terminal backend only from $BDSH_HOME/plugins, never from a project's .bdsh/plugins", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-home-"));
    const project = join(mkdtempSync(join(tmpdir(), "bdsh-ws-")), ".bdsh", "plugins");
    mkdirSync(join(home, "plugins"), { recursive: true });
    mkdirSync(project, { recursive: true });
    const source = (name: string) =>
      `export function register(ctx) { ctx.registerTerminalBackend({ name: "${name}", createEnvironment() { throw new Error("no"); } }); }`;
    writeFileSync(join(home, "plugins", "homebox.mjs"), source("homebox"));
    writeFileSync(join(project, "projbox.mjs"), source("projbox"));
    const backends = builtinRegistry();
    const report = await loadPlugins({
      directories: [join(home, "plugins"), project],
      registry: createStandardRegistry(),
      hooks: new HookBus(),
      backends,
      backendDirectory: join(home, "plugins"),
    });
    expect(report.loaded.map((l) => l.name)).toEqual(["homebox"]);
    expect(report.failed[0]?.error).toMatch(
      /only plugins in \$BDSH_HOME\/plugins may register terminal backends/,
    );
    expect(backends.get("homebox")).toBeDefined();
    expect(backends.get("projbox")).toBeUndefined();
  });
});
