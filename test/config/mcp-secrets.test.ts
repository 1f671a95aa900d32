/**
 * A bad `mcp_servers` entry is a configuration error naming the key, and never quotes the entry back (its
 * `env` and `headers` may hold literal secrets); what the entries hand to servers stays the harness's.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import type { LogEvent } from "../../src/log/events.js";
import { REDACTED } from "../../src/log/redact.js";
import { environmentPolicy, secretRedactor } from "../../src/presets/open-agent.js";
import { startFakeProvider } from "../../testing/fake-provider/index.js";
import { runCli } from "../support/run-cli.js";

const CANARY = "sk-canary-4f1d9a";

function errorFor(entry: unknown): string {
  const home = mkdtempSync(join(tmpdir(), "bdsh-mcp-cfg-"));
  writeFileSync(join(home, "config.yaml"), JSON.stringify({ mcp_servers: { remote: entry } }));
  try {
    loadConfig({ home, cwd: home, env: {} });
  } catch (error) {
    return String((error as Error).message);
  }
  throw new Error("no configuration error");
}

describe("mcp_servers errors never quote the entry", () => {
  it.each([
    ["env on a URL server", { url: "https://mcp.example/mcp", env: { TOKEN: CANARY } }],
    ["both command and url", { command: "x", url: "https://mcp.example/mcp", headers: { a: CANARY } }],
    ["a header that is not a string", { url: "https://mcp.example/mcp", headers: { a: [CANARY] } }],
  ])("%s", (_name, entry) => {
    const message = errorFor(entry);
    expect(message).toContain("mcp_servers.remote");
    expect(message).not.toContain(CANARY);
  });
});

/**
 * An MCP server's `${VAR}` secret is the harness's: the variable never reaches a command the model runs
 * (whatever its name), and its value, or a literal one given to a server, is redacted from what is stored
 * and sent.
 */
describe("mcp_servers secrets stay with the harness", () => {
  const SECRET = "vault-cred-7c21e9b04d";
  const LITERAL = "literal-hdr-5ab3e0917f";
  const config = (home: string) =>
    writeFileSync(
      join(home, "config.yaml"),
      JSON.stringify({
        mcp_servers: {
          // Never starts (exits at once): its configuration alone must protect what it would be given.
          vault: {
            command: process.execPath,
            args: ["-e", "process.exit(1)"],
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own ${VAR} syntax
            env: { VAULT_AUTH: "${MY_VAULT}" },
          },
          remote: { url: "http://127.0.0.1:9/mcp", headers: { authorization: `Bearer ${LITERAL}` } },
        },
      }),
    );

  it("keeps the variable from commands and the values from the policy's children and the redactor", () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-mcp-sec-"));
    config(home);
    const { config: loaded } = loadConfig({ home, cwd: home, env: {} });
    const env = { MY_VAULT: SECRET, PATH: "/usr/bin" };
    expect(environmentPolicy(loaded).childEnvironment(env)).not.toHaveProperty("MY_VAULT");
    const redactor = secretRedactor(env, loaded);
    expect(redactor.text(`a ${SECRET} b ${LITERAL} c`)).toBe(`a ${REDACTED} b ${REDACTED} c`);
  });

  it("end to end: `echo $MY_VAULT` in bdsh run prints nothing, and neither value is stored or sent", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-mcp-sec-"));
    const workspace = mkdtempSync(join(tmpdir(), "bdsh-mcp-sec-ws-"));
    config(home);
    const fake = await startFakeProvider({
      script: [
        {
          toolCalls: [
            {
              id: "c1",
              name: "bash",
              arguments: { command: 'echo "cred=[$MY_VAULT]"', description: "peek" },
            },
          ],
        },
        // A model that learnt the values some other way and repeats them.
        { text: `It is ${SECRET} and ${LITERAL}.` },
      ],
    });
    try {
      const result = await runCli(
        ["run", "--json", "show me the credential"],
        { BDSH_HOME: home, BDSH_BASE_URL: fake.url, DEEPSEEK_API_KEY: "sk-test-mcp-sec", MY_VAULT: SECRET },
        workspace,
      );
      expect(result.code, result.stderr).toBe(0);
      const events = result.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as LogEvent);
      const output = events.find((e) => e.type === "tool/result");
      expect(JSON.stringify(output?.data)).toContain("cred=[]");
      for (const text of [result.stdout, result.stderr, JSON.stringify(fake.requests.map((r) => r.body))]) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain(LITERAL);
      }
      expect(result.stdout).toContain(REDACTED);
    } finally {
      await fake.close();
    }
  });
});
