/**
 * The pure parts of issue 18: tool names (T1: `[A-Za-z0-9_-]{1,64}`, deterministic, unique, stable across
 * list changes), `${VAR}` expansion and the secrets it makes, and T21's result texts.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import {
  expandVariables,
  mcpServersSchema,
  secretValues,
  serverSettingsFrom,
  toolAllowed,
} from "../../src/config/mcp-servers.js";
import { Redactor } from "../../src/log/redact.js";
import { mcpToolNames } from "../../src/mcp/names.js";
import { emptyResultText, resultToOutput } from "../../src/mcp/results.js";
import { TOOL_NAME } from "../../src/tools/registry.js";
import { ref } from "./support.js";

describe("MCP tool names", () => {
  it("are mcp__<server>__<tool>, cleaned, cut to 64 and unique, the same on every run", () => {
    const long = "x".repeat(80);
    const tools = ["echo", "get sum", "get_sum", "get.sum", long, `${long}y`];
    const names = mcpToolNames("srv", tools);
    expect(names.get("echo")).toBe("mcp__srv__echo");
    expect(names.get("get sum")).toBe("mcp__srv__get_sum");
    const all = [...names.values()];
    expect(new Set(all).size).toBe(tools.length);
    for (const name of all) expect(name).toMatch(TOOL_NAME);
    expect(names.get(long)!.length).toBe(64);
    expect(mcpToolNames("srv", tools)).toEqual(names);
  });

  it("keep the names a previous list gave, whatever the new order", () => {
    const before = mcpToolNames("s", ["a b", "a_b"]);
    const after = mcpToolNames("s", ["a_b", "new", "a b"], before);
    expect(after.get("a b")).toBe(before.get("a b"));
    expect(after.get("a_b")).toBe(before.get("a_b"));
    expect(after.get("new")).toBe("mcp__s__new");
  });
});

describe("MCP config", () => {
  it("expands $-braced variables from the environment and lists every expanded value as a secret", () => {
    const env = { TOKEN: "tok-123456789", EMPTY: undefined };
    expect(expandVariables(`Bearer ${ref("TOKEN")}`, env)).toBe("Bearer tok-123456789");
    expect(expandVariables(`${ref("EMPTY")}|$$|$HOME`, env)).toBe("|$|$HOME");
    const servers = mcpServersSchema.parse({
      a: { command: "x", env: { K: ref("TOKEN") } },
      b: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: `Bearer ${ref("TOKEN")}` } },
    });
    expect(serverSettingsFrom(servers.a!)).toMatchObject({
      enabled: true,
      timeout_ms: 60_000,
      startup_timeout_ms: 10_000,
    });
    const secrets = secretValues(servers, env);
    expect(secrets).toContain("tok-123456789");
    expect(secrets).toContain("Bearer tok-123456789");
  });

  it("merges a server's keys across config files without a later file's defaults undoing earlier keys", () => {
    const root = mkdtempSync(join(tmpdir(), "bdsh-mcp-layers-"));
    writeFileSync(join(root, "config.yaml"), "mcp_servers:\n  a: { command: x, timeout_ms: 5000 }\n");
    writeFileSync(
      join(root, "extra.yaml"),
      "mcp_servers:\n  a: { command: y }\n  b: { url: 'http://127.0.0.1:1/mcp' }\n",
    );
    const { config } = loadConfig({
      home: root,
      cwd: root,
      env: {},
      configFile: "extra.yaml",
      trusted: false,
    });
    expect(config.mcp_servers.a).toEqual({ command: "y", timeout_ms: 5000 });
    expect(Object.keys(config.mcp_servers)).toEqual(["a", "b"]);
  });

  it("filters tools by include, then exclude", () => {
    const server = mcpServersSchema.parse({
      a: { command: "x", tools: { include: ["p", "q"], exclude: ["q"] } },
    }).a!;
    expect(["p", "q", "r"].filter((t) => toolAllowed(server, t))).toEqual(["p"]);
  });
});

describe("MCP results (T21)", () => {
  const sink = { images: false };
  it("joins text, lists links, describes binary, and redacts", () => {
    const redactor = Redactor.of(["secret-value-1"]);
    const output = resultToOutput(
      "mcp__s__t",
      {
        content: [
          { type: "text", text: "one secret-value-1" },
          { type: "resource_link", uri: "file:///a.txt", name: "a.txt", mimeType: "text/plain" },
          { type: "resource", resource: { uri: "mem://b", text: "inline" } },
          { type: "resource", resource: { uri: "mem://c", blob: "AAAA", mimeType: "application/x-bin" } },
          { type: "audio", data: "AAAA", mimeType: "audio/wav" },
        ],
      },
      sink,
      redactor,
    );
    expect(output.text).toBe(
      [
        "one [REDACTED]",
        "[resource link file:///a.txt (a.txt, text/plain)]",
        "[resource mem://b]\ninline",
        "[resource mem://c: application/x-bin, 3 bytes of binary content, not shown]",
        "[audio content (audio/wav) not shown: audio is not supported]",
      ].join("\n\n"),
    );
  });

  it("gives isError as Error: …, nothing as the seed's text, and structured content as JSON", () => {
    expect(
      resultToOutput("t", { isError: true, content: [{ type: "text", text: "boom" }] }, sink, Redactor.none),
    ).toEqual({
      text: "Error: boom",
      isError: true,
      code: "MCP_TOOL_ERROR",
    });
    expect(resultToOutput("t", { isError: true, content: [] }, sink, Redactor.none).text).toBe(
      "Error: t reported an error without a message",
    );
    expect(resultToOutput("mcp__s__t", { content: [] }, sink, Redactor.none).text).toBe(
      emptyResultText("mcp__s__t"),
    );
    expect(emptyResultText("mcp__s__t")).toBe("(mcp__s__t returned no model-visible content)");
    expect(resultToOutput("t", { content: [], structuredContent: { a: 1 } }, sink, Redactor.none).text).toBe(
      '{"a":1}',
    );
  });
});
