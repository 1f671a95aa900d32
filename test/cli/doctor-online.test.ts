/**
 * Issue 15 items 6 and 7, end to end through the real CLI: `bdsh doctor --online` checks the key with one
 * GET of the model list (ok, AUTH, unreachable; the key never printed), and `bdsh doctor` says which
 * ripgrep glob and grep run.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rgPath } from "@vscode/ripgrep";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { closedPort } from "../support/closed-port.js";
import { runCli } from "../support/run-cli.js";

const KEY = "sk-doctor-online-0123456789";
const open: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((fake) => fake.close()));
});

async function fake(apiKey = KEY): Promise<FakeProvider> {
  const provider = await startFakeProvider({ script: [], apiKey });
  open.push(provider);
  return provider;
}

function home(): { BDSH_HOME: string; cwd: string } {
  const root = mkdtempSync(join(tmpdir(), "bdsh-doctor-"));
  return { BDSH_HOME: join(root, "home"), cwd: root };
}

/** `bdsh doctor ARGS` in a fresh home, with the provider, base URL and key given as environment. */
function doctor(args: string[], provider: string, baseUrl: string, keys: Record<string, string>) {
  const { BDSH_HOME, cwd } = home();
  return runCli(
    ["doctor", ...args],
    { BDSH_HOME, BDSH_PROVIDER: provider, BDSH_BASE_URL: baseUrl, ...keys },
    cwd,
  );
}

/** The `online` line of doctor's output. */
function onlineLine(stdout: string): string | undefined {
  return stdout.split("\n").find((line) => /^\w+\s+online\s/.test(line));
}

describe("bdsh doctor --online", () => {
  it("ok: one GET of {base}/models with the bearer key (OpenAI format)", async () => {
    const provider = await fake();
    const result = await doctor(["--online"], "deepseek", provider.url, { DEEPSEEK_API_KEY: KEY });
    expect(onlineLine(result.stdout)).toBe(
      `ok    online       provider deepseek accepted the key in DEEPSEEK_API_KEY: GET ${provider.url}/models answered 200`,
    );
    expect(result.code).toBe(0);
    expect(provider.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /models"]);
    expect(provider.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(result.stdout + result.stderr).not.toContain(KEY);
  });

  it("ok: GET /v1/models with x-api-key (Anthropic Messages)", async () => {
    const provider = await fake();
    const result = await doctor(["--online"], "anthropic", provider.url, { ANTHROPIC_API_KEY: KEY });
    expect(onlineLine(result.stdout)).toMatch(
      /^ok\s+online\s+provider anthropic accepted the key in ANTHROPIC_API_KEY/,
    );
    expect(provider.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /v1/models"]);
    expect(provider.requests[0]?.headers["x-api-key"]).toBe(KEY);
    expect(provider.requests[0]?.headers["anthropic-version"]).toBe("2023-06-01");
  });

  it("AUTH: a refused key fails the check (exit 1) and is never printed", async () => {
    const provider = await fake();
    const wrong = "sk-wrong-key-9876543210";
    const result = await doctor(["--online"], "deepseek", provider.url, { DEEPSEEK_API_KEY: wrong });
    expect(onlineLine(result.stdout)).toBe(
      `fail  online       AUTH: provider deepseek refused the key in DEEPSEEK_API_KEY (GET ${provider.url}/models answered 401: Authentication Fails (the API key is invalid)); check the key or set the right variable (DEEPSEEK_API_KEY or BDSH_API_KEY)`,
    );
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).not.toContain(wrong);
  });

  it("unreachable: names the base URL, with its credentials redacted", async () => {
    const port = await closedPort();
    const baseUrl = `http://127.0.0.1:${port}/v1?api_key=${KEY}`;
    const result = await doctor(["--online"], "openai", baseUrl, { OPENAI_API_KEY: KEY });
    expect(onlineLine(result.stdout)).toMatch(
      new RegExp(
        `^fail  online       unreachable: provider openai at http://127\\.0\\.0\\.1:${port}/v1\\?api_key=\\*\\*\\*: connection failed: .*ECONNREFUSED.*; check the base URL \\(--base-url, BDSH_BASE_URL, OPENAI_BASE_URL or model\\.base_url\\) and the network$`,
      ),
    );
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).not.toContain(KEY);
  });

  it("AUTH: no key at all fails without sending anything", async () => {
    const provider = await fake();
    const result = await doctor(["--online"], "together", provider.url, {});
    expect(onlineLine(result.stdout)).toBe(
      "fail  online       AUTH: no API key for together: set TOGETHER_API_KEY or BDSH_API_KEY",
    );
    expect(result.code).toBe(1);
    expect(provider.requests).toEqual([]);
  });

  it("--base-url is the base URL it checks", async () => {
    const provider = await fake();
    const { BDSH_HOME, cwd } = home();
    const env = { BDSH_HOME, BDSH_PROVIDER: "deepseek", DEEPSEEK_API_KEY: KEY };
    const result = await runCli(["--base-url", `${provider.url}/v9`, "doctor", "--online"], env, cwd);
    expect(onlineLine(result.stdout)).toMatch(/^ok\s+online\s+provider deepseek accepted/);
    expect(provider.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /v9/models"]);
  });

  it("without --online nothing is sent", async () => {
    const provider = await fake();
    const result = await doctor([], "deepseek", provider.url, { DEEPSEEK_API_KEY: KEY });
    expect(result.code).toBe(0);
    expect(onlineLine(result.stdout)).toBeUndefined();
    expect(provider.requests).toEqual([]);
  });
});

describe("bdsh doctor reports which rg glob and grep use", () => {
  it("the packaged one, even with no rg on PATH", async () => {
    const { BDSH_HOME, cwd } = home();
    const noRg = mkdtempSync(join(tmpdir(), "bdsh-no-rg-"));
    // bash, git and bwrap are missing on this PATH too: those are warnings, not failures.
    const result = await runCli(["doctor"], { BDSH_HOME, PATH: noRg }, cwd);
    expect(result.stdout).toMatch(
      new RegExp(
        `^ok\\s+rg\\s+${rgPath.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} \\(ripgrep \\d+\\.[^;]*; packaged @vscode/ripgrep\\)$`,
        "m",
      ),
    );
  });

  it("BDSH_RG_PATH overrides it", async () => {
    const { BDSH_HOME, cwd } = home();
    const result = await runCli(["doctor"], { BDSH_HOME, BDSH_RG_PATH: rgPath }, cwd);
    expect(result.stdout).toMatch(/^ok\s+rg\s+\S+ \(ripgrep [^;]*; BDSH_RG_PATH override\)$/m);
  });
});
