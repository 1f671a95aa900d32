import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load.js";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";

let home: string;
let cwd: string;

beforeEach(() => {
  const root = mkdtempSync(join(tmpdir(), "bdsh-config-"));
  home = join(root, "home");
  cwd = join(root, "work");
  mkdirSync(home);
  mkdirSync(join(cwd, ".bdsh"), { recursive: true });
});

function catchConfigError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("config", () => {
  it("gives the documented defaults with no sources", () => {
    const { config, files } = loadConfig({ home, cwd, env: {} });
    expect(config).toEqual(DEFAULT_CONFIG);
    expect(config.model.context_window).toBe(1_048_576);
    expect(config.retry).toEqual({
      mode: "normal",
      max_retries: 5,
      initial_delay_ms: 500,
      max_delay_ms: 10_000,
      jitter_ratio: 0.1,
    });
    expect(config.tools.max_parallel).toBe(10);
    expect(config.goal.max_rounds).toBe(256);
    expect(files).toEqual([]);
  });

  it("applies flags over environment over --config over workspace over home over defaults", () => {
    writeFileSync(
      join(home, "config.yaml"),
      "model: { effort: low, id: home-model }\nsandbox: danger-full-access\ngoal: { max_rounds: 3 }\n",
    );
    writeFileSync(
      join(cwd, ".bdsh", "config.yaml"),
      "model: { id: workspace-model }\nsandbox: workspace-write\n",
    );
    writeFileSync(join(cwd, "extra.yaml"), "model: { provider: together }\napproval: never\n");
    const { config, files } = loadConfig({
      home,
      cwd,
      configFile: "extra.yaml",
      env: { BDSH_APPROVAL: "ask", BDSH_MODEL: "env-model" },
      flags: { model: "flag-model" },
      trusted: true,
    });
    expect(config.model.id).toBe("flag-model");
    expect(config.approval).toBe("ask");
    expect(config.model.provider).toBe("together");
    expect(config.sandbox).toBe("workspace-write"); // a trusted project may tighten a security key
    expect(config.model.effort).toBe("low");
    expect(config.goal.max_rounds).toBe(3);
    expect(config.model.context_window).toBe(1_048_576);
    expect(files).toEqual([
      join(home, "config.yaml"),
      join(cwd, ".bdsh", "config.yaml"),
      join(cwd, "extra.yaml"),
    ]);
  });

  it("reads BDSH_CONFIG as the extra file", () => {
    writeFileSync(join(cwd, "ci.yaml"), "retry: { max_retries: 0 }\n");
    const { config } = loadConfig({ home, cwd, env: { BDSH_CONFIG: join(cwd, "ci.yaml") } });
    expect(config.retry.max_retries).toBe(0);
  });

  it("names the key and the file for an unknown key", () => {
    writeFileSync(join(cwd, ".bdsh", "config.yaml"), "tools: { max_paralel: 4 }\n");
    const error = catchConfigError(() => loadConfig({ home, cwd, env: {}, trusted: true }));
    expect(error.key).toBe("tools.max_paralel");
    expect(error.source).toBe(join(cwd, ".bdsh", "config.yaml"));
    expect(error.message).toContain("unknown key");
  });

  it("names the key and the file for a wrong type", () => {
    writeFileSync(join(home, "config.yaml"), "retry:\n  max_retries: lots\n");
    const error = catchConfigError(() => loadConfig({ home, cwd, env: {} }));
    expect(error.key).toBe("retry.max_retries");
    expect(error.source).toBe(join(home, "config.yaml"));
    expect(error.message).toMatch(/expected number, got "lots"/);
  });

  it("names an unknown provider and where it came from", () => {
    const fromEnv = catchConfigError(() => loadConfig({ home, cwd, env: { BDSH_PROVIDER: "gemini" } }));
    expect(fromEnv.key).toBe("model.provider");
    expect(fromEnv.source).toBe("environment variable BDSH_PROVIDER");
    expect(fromEnv.message).toContain('got "gemini"');
    const fromFlag = catchConfigError(() => loadConfig({ home, cwd, env: {}, flags: { effort: "medium" } }));
    expect(fromFlag.key).toBe("model.effort");
    expect(fromFlag.source).toBe("flag --effort");
  });

  it("rejects bad values that have the right type", () => {
    writeFileSync(join(home, "config.yaml"), "compaction: { retain_ratio: 1.5 }\n");
    const error = catchConfigError(() => loadConfig({ home, cwd, env: {} }));
    expect(error.key).toBe("compaction.retain_ratio");
  });

  it("reports invalid YAML with the file", () => {
    writeFileSync(join(home, "config.yaml"), "model: [unclosed\n");
    const error = catchConfigError(() => loadConfig({ home, cwd, env: {} }));
    expect(error.source).toBe(join(home, "config.yaml"));
    expect(error.message).toContain("invalid YAML");
  });

  it("reports a missing --config file", () => {
    const error = catchConfigError(() => loadConfig({ home, cwd, env: {}, configFile: "nope.yaml" }));
    expect(error.message).toContain("config file not found");
  });

  it("treats an empty file as no settings", () => {
    writeFileSync(join(home, "config.yaml"), "");
    expect(loadConfig({ home, cwd, env: {} }).config).toEqual(DEFAULT_CONFIG);
  });
});

describe("command_allowlist persistence", () => {
  it("adds a key once and keeps the rest of the file", async () => {
    const { addToCommandAllowlist } = await import("../../src/config/allowlist.js");
    writeFileSync(join(home, "config.yaml"), "# mine\nsandbox: read-only\n");
    addToCommandAllowlist(home, "recursive-delete");
    addToCommandAllowlist(home, "recursive-delete");
    addToCommandAllowlist(home, "mass-kill");
    const { config } = loadConfig({ home, cwd, env: {} });
    expect(config.command_allowlist).toEqual(["recursive-delete", "mass-kill"]);
    expect(config.sandbox).toBe("read-only");
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toContain("# mine");
  });
});
