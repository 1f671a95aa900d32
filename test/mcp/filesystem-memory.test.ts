/**
 * Issue 18 against the real server-filesystem and server-memory, both in one session, with the config's
 * tool filter (`tools: {include, exclude}`).
 */
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FILESYSTEM, MEMORY, runSession, stdio, toolNamesOf, withDefaults } from "./support.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

describe("server-filesystem and server-memory", () => {
  it("reads and writes files inside the allowed directory and keeps a knowledge graph", async () => {
    const allowed = realpathSync(mkdtempSync(join(tmpdir(), "bdsh-mcp-fs-")));
    const memoryFile = join(mkdtempSync(join(tmpdir(), "bdsh-mcp-mem-")), "memory.jsonl");
    writeFileSync(join(allowed, "dot.png"), PNG);
    const session = await runSession({
      mcp: withDefaults({
        fs: stdio(FILESYSTEM, [allowed], {
          tools: { include: ["read_text_file", "write_file", "list_directory", "read_media_file"] },
        }),
        memory: stdio(MEMORY, [], {
          env: { MEMORY_FILE_PATH: memoryFile },
          tools: { exclude: ["delete_entities"] },
        }),
      }),
      patch: {
        model: {
          provider: "deepseek",
          id: "deepseek-flash",
          context_window: 1_048_576,
          max_output_tokens: 32_768,
          effort: "high",
          images: true,
        },
      },
      script: [
        {
          toolCalls: [
            {
              id: "write",
              name: "mcp__fs__write_file",
              arguments: { path: join(allowed, "note.txt"), content: "from the model" },
            },
            {
              id: "entities",
              name: "mcp__memory__create_entities",
              arguments: {
                entities: [{ name: "bdsh", entityType: "project", observations: ["speaks MCP"] }],
              },
            },
          ],
        },
        {
          toolCalls: [
            { id: "read", name: "mcp__fs__read_text_file", arguments: { path: join(allowed, "note.txt") } },
            { id: "outside", name: "mcp__fs__read_text_file", arguments: { path: "/etc/hostname" } },
            { id: "list", name: "mcp__fs__list_directory", arguments: { path: allowed } },
            { id: "media", name: "mcp__fs__read_media_file", arguments: { path: join(allowed, "dot.png") } },
            { id: "graph", name: "mcp__memory__read_graph", arguments: {} },
          ],
        },
        { text: "done" },
      ],
    });
    const names = toolNamesOf(session.fake.requests[0]!);
    expect(names.filter((n) => n.startsWith("mcp__fs__")).sort()).toEqual([
      "mcp__fs__list_directory",
      "mcp__fs__read_media_file",
      "mcp__fs__read_text_file",
      "mcp__fs__write_file",
    ]);
    expect(names).toContain("mcp__memory__search_nodes");
    expect(names).not.toContain("mcp__memory__delete_entities");

    expect(session.results.get("write")?.isError).toBeUndefined();
    expect(readFileSync(join(allowed, "note.txt"), "utf8")).toBe("from the model");
    expect(session.results.get("read")).toEqual({ text: "from the model" });
    const outside = session.results.get("outside")!;
    expect(outside.isError).toBe(true);
    expect(outside.text).toMatch(/^Error: .*(denied|outside|not allowed)/i);
    expect(session.results.get("list")?.text).toContain("[FILE] note.txt");
    expect(session.results.get("media")?.text).toMatch(
      /\[Image "mcp__fs__read_media_file-1\.png" \(image\/png, \d+ bytes/,
    );
    expect(session.results.get("entities")?.text).toContain('"name": "bdsh"');
    expect(session.results.get("graph")?.text).toContain("speaks MCP");
    expect(readFileSync(memoryFile, "utf8")).toContain("speaks MCP");
  });
});
