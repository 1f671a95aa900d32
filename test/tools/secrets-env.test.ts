/**
 * Issue 14 finding 4: the default environment policy (Codex `shell_environment_policy`). Real child
 * processes run `env` through the local terminal environment (bubblewrap included when present).
 */
import { describe, expect, it } from "vitest";
import { bubblewrapAvailable } from "../../src/tools/terminal/bubblewrap.js";
import { EnvironmentPolicy } from "../../src/tools/terminal/child-env.js";
import { LocalEnvironment } from "../../src/tools/terminal/local.js";
import type { SandboxMode } from "../../src/tools/types.js";
import { tempDir } from "./support.js";

const CANARY = "canary-9d2e51b7c4";
const BASE = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/home/tester",
  LANG: "C.UTF-8",
  AWS_SECRET_ACCESS_KEY: CANARY,
  GITHUB_TOKEN: CANARY,
  MY_PASSWORD: CANARY,
  GOOGLE_APPLICATION_CREDENTIALS: CANARY,
  NPM_TOKEN: CANARY,
  github_token: CANARY, // case-insensitive
  DEEPSEEK_API_KEY: CANARY,
  BDSH_SERVER_TOKEN: CANARY,
  DATABASE_URL: `postgres://u:${CANARY}@h/db`,
  KEYBOARD_LAYOUT: "dvorak",
  HARMLESS: "visible",
};

async function childEnv(
  options: {
    stripEnvKeys?: string[];
    passEnvKeys?: string[];
    harnessEnvKeys?: string[];
    baseEnv?: NodeJS.ProcessEnv;
    sandbox?: SandboxMode;
  } = {},
): Promise<Map<string, string>> {
  const cwd = tempDir();
  const terminal = new LocalEnvironment({
    cwd,
    stripEnvKeys: options.stripEnvKeys ?? [],
    ...(options.passEnvKeys ? { passEnvKeys: options.passEnvKeys } : {}),
    ...(options.harnessEnvKeys ? { harnessEnvKeys: options.harnessEnvKeys } : {}),
    baseEnv: options.baseEnv ?? BASE,
  });
  try {
    const result = await terminal.execute("env", {
      cwd,
      timeoutMs: 30_000,
      sandbox: { mode: options.sandbox ?? "workspace-write", workspace: cwd },
    });
    expect(result.exitCode).toBe(0);
    const vars = new Map<string, string>();
    for (const line of result.stdout.split("\n")) {
      const at = line.indexOf("=");
      if (at > 0) vars.set(line.slice(0, at), line.slice(at + 1));
    }
    return vars;
  } finally {
    await terminal.cleanup();
  }
}

const modes: SandboxMode[] = bubblewrapAvailable()
  ? ["read-only", "workspace-write", "danger-full-access"]
  : ["danger-full-access"];

describe("issue 14 finding 4: default environment policy in a real child", () => {
  for (const sandbox of modes) {
    it(`removes *KEY*, *SECRET*, *TOKEN*, *PASSWORD*, *CREDENTIAL* names under ${sandbox}`, async () => {
      const vars = await childEnv({ sandbox });
      for (const name of [
        "AWS_SECRET_ACCESS_KEY",
        "GITHUB_TOKEN",
        "MY_PASSWORD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "NPM_TOKEN",
        "github_token",
        "DEEPSEEK_API_KEY",
        "BDSH_SERVER_TOKEN",
        "DATABASE_URL",
      ]) {
        expect(vars.has(name), name).toBe(false);
      }
      expect([...vars.values()].join("\n")).not.toContain(CANARY);
      expect(vars.get("PATH")).toBe(BASE.PATH);
      expect(vars.get("HOME")).toBe(BASE.HOME);
      expect(vars.get("LANG")).toBe(BASE.LANG);
      expect(vars.get("HARMLESS")).toBe("visible");
      // The documented false positive: *KEY* matches it; pass_env_keys is the escape hatch.
      expect(vars.has("KEYBOARD_LAYOUT")).toBe(false);
    });
  }

  it("pass_env_keys lets a matching name through, by name or glob, case-sensitively", async () => {
    const vars = await childEnv({ passEnvKeys: ["NPM_TOKEN", "KEYBOARD_*"] });
    expect(vars.get("NPM_TOKEN")).toBe(CANARY);
    expect(vars.get("KEYBOARD_LAYOUT")).toBe("dvorak");
    expect(vars.has("GITHUB_TOKEN")).toBe(false);
    expect(vars.has("github_token")).toBe(false);
  });

  it("pass_env_keys never passes the harness's own secrets", async () => {
    const vars = await childEnv({
      passEnvKeys: ["*", "DEEPSEEK_API_KEY", "BDSH_SERVER_TOKEN", "DATABASE_URL", "LLM_CRED"],
      harnessEnvKeys: ["LLM_CRED"], // the `--api-key-env` variable
      baseEnv: { ...BASE, LLM_CRED: CANARY, BDSH_OTHER_TOKEN: CANARY },
    });
    for (const name of [
      "DEEPSEEK_API_KEY",
      "BDSH_SERVER_TOKEN",
      "DATABASE_URL",
      "LLM_CRED",
      "BDSH_OTHER_TOKEN",
    ]) {
      expect(vars.has(name), name).toBe(false);
    }
    expect(vars.get("GITHUB_TOKEN")).toBe(CANARY);
  });

  it("the --api-key-env variable is stripped even when its name matches no pattern", async () => {
    const vars = await childEnv({ harnessEnvKeys: ["LLM_CRED"], baseEnv: { ...BASE, LLM_CRED: CANARY } });
    expect(vars.has("LLM_CRED")).toBe(false);
  });

  it("strip_env_keys accepts names and globs, case-insensitively", async () => {
    const vars = await childEnv({
      stripEnvKeys: ["VAULT_*", "internal_addr"],
      baseEnv: { ...BASE, VAULT_ADDR: "https://vault", INTERNAL_ADDR: "10.0.0.1", KEEP: "x" },
    });
    expect(vars.has("VAULT_ADDR")).toBe(false);
    expect(vars.has("INTERNAL_ADDR")).toBe(false);
    expect(vars.get("KEEP")).toBe("x");
  });
});

describe("issue 14 finding 4: the values the redactor must know", () => {
  it("lists stripped values, the DATABASE_URL password, and not values visible elsewhere", () => {
    const policy = new EnvironmentPolicy({ pass: ["NPM_TOKEN"] });
    const values = policy.secretValues({
      GITHUB_TOKEN: "ghp_abcdefghijkl",
      NPM_TOKEN: "npm_passed_through",
      KEYS_DIR: "/home/tester", // equals $HOME, which children see anyway
      HOME: "/home/tester",
      DATABASE_URL: "postgres://u:p%40ss-word-99@h/db",
    });
    expect(values).toContain("ghp_abcdefghijkl");
    expect(values).toContain("p@ss-word-99");
    expect(values).toContain("p%40ss-word-99");
    expect(values).not.toContain("npm_passed_through");
    expect(values).not.toContain("/home/tester");
  });
});
