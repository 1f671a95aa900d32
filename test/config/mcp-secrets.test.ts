/**
 * Issue 18 with issue 14 finding 4: a bad `mcp_servers` entry is a configuration error naming the key, and
 * never quotes the entry back (its `env` and `headers` may hold literal secrets).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";

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
