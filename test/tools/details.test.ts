/**
 * Issue 32 deliver 1: every standard tool says what it did as `details`, beside a model-visible text that
 * stays exactly what it was. Real files, real bash, a real HTTP server; the web search provider is the only
 * stand-in (a service, as in production).
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { MAX_DETAIL_DIFF_LINES, MAX_DETAIL_LINE_CHARS } from "../../src/log/tool-details.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { createStandardRegistry } from "../../src/tools/standard.js";
import type { ToolOutput } from "../../src/tools/types.js";
import { call, makeExec, tempDir } from "./support.js";

function setup() {
  const workspace = tempDir();
  const ctx = makeExec({ workspace, sandbox: "danger-full-access" });
  const registry = createStandardRegistry({ webFetchAllowPrivate: true });
  const pipeline = new ToolPipeline({ registry, hooks: new HookBus() });
  const tool = (name: string, args: Record<string, unknown>): Promise<ToolOutput> =>
    pipeline.run(call(name, args), ctx.exec);
  const file = (name: string, content: string) => {
    writeFileSync(join(workspace, name), content);
    return join(workspace, name);
  };
  return { workspace, ctx, tool, file };
}

describe("read details", () => {
  it("count the file's lines, not the text's (an 8-line file is 8 lines)", async () => {
    const { tool, file } = setup();
    const path = file("parse.js", Array.from({ length: 8 }, (_, i) => `line ${i}`).join("\n"));
    const out = await tool("read", { file_path: "parse.js" });
    expect(out.text.split("\n")).toHaveLength(13);
    expect(out.details).toEqual({ kind: "read", path, startLine: 1, endLine: 8, totalLines: 8 });
  });

  it("name the window a page shows, and an empty file shows none", async () => {
    const { tool, file } = setup();
    const path = file("n.txt", Array.from({ length: 50 }, (_, i) => `l${i}`).join("\n"));
    expect((await tool("read", { file_path: "n.txt", offset: 11, limit: 5 })).details).toEqual({
      kind: "read",
      path,
      startLine: 11,
      endLine: 15,
      totalLines: 50,
    });
    const empty = file("e.txt", "");
    expect((await tool("read", { file_path: "e.txt" })).details).toEqual({
      kind: "read",
      path: empty,
      startLine: 1,
      endLine: 0,
      totalLines: 0,
    });
  });
});

describe("write and edit details: the file's real change", () => {
  it("a new file is created, all lines added", async () => {
    const { tool, workspace } = setup();
    const out = await tool("write", { file_path: "new.txt", content: "one\ntwo\n" });
    expect(out.text).toBe(`Created file ${join(workspace, "new.txt")}`);
    expect(out.details).toEqual({
      kind: "file-change",
      path: join(workspace, "new.txt"),
      change: "created",
      added: 2,
      removed: 0,
      diff: [
        { kind: "+", text: "one" },
        { kind: "+", text: "two" },
      ],
    });
  });

  it("a rewrite is diffed against the old content read from disk, not the arguments", async () => {
    const { tool, file } = setup();
    const path = file("a.txt", "a\nb\nc\n");
    await tool("read", { file_path: "a.txt" });
    const out = await tool("write", { file_path: "a.txt", content: "a\nB\nc\n" });
    expect(out.details).toEqual({
      kind: "file-change",
      path,
      change: "modified",
      added: 1,
      removed: 1,
      diff: [
        { kind: "@", text: "@@ -1,3 +1,3 @@" },
        { kind: " ", text: "a" },
        { kind: "-", text: "b" },
        { kind: "+", text: "B" },
        { kind: " ", text: "c" },
      ],
    });
  });

  it("replace_all far apart gives one hunk per place and counts the occurrences", async () => {
    const { tool, file } = setup();
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i}`);
    lines[2] = "TODO";
    lines[35] = "TODO";
    file("f.txt", `${lines.join("\n")}\n`);
    await tool("read", { file_path: "f.txt" });
    const out = await tool("edit", {
      file_path: "f.txt",
      old_string: "TODO",
      new_string: "DONE",
      replace_all: true,
    });
    expect(out.text).toMatch(/All occurrences were successfully replaced\.$/);
    const details = out.details as { diff: { kind: string; text: string }[]; replacements?: number };
    expect(details).toMatchObject({ change: "modified", added: 2, removed: 2, replacements: 2 });
    expect(details.diff.filter((line) => line.kind === "@").map((line) => line.text)).toEqual([
      "@@ -1,6 +1,6 @@",
      "@@ -33,7 +33,7 @@",
    ]);
    // Only context around the changes: nothing of the 25 lines between them.
    expect(details.diff.some((line) => line.text === "line 20")).toBe(false);
  });

  it("a CRLF file's diff shows its lines without the carriage returns", async () => {
    const { tool, file } = setup();
    file("w.txt", "x\r\ny\r\n");
    await tool("read", { file_path: "w.txt" });
    const out = await tool("edit", { file_path: "w.txt", old_string: "y", new_string: "z" });
    expect((out.details as { diff: unknown }).diff).toEqual([
      { kind: "@", text: "@@ -1,2 +1,2 @@" },
      { kind: " ", text: "x" },
      { kind: "-", text: "y" },
      { kind: "+", text: "z" },
    ]);
  });

  it("a huge change is bounded: MAX_DETAIL_DIFF_LINES lines, the rest counted; long lines cut", async () => {
    const { tool } = setup();
    const content = Array.from({ length: 3_000 }, (_, i) => `${i}${"w".repeat(i === 0 ? 5_000 : 1)}`).join(
      "\n",
    );
    const out = await tool("write", { file_path: "big.txt", content });
    const details = out.details as { diff: { text: string }[]; added: number; omittedLines?: number };
    expect(details.added).toBe(3_000);
    expect(details.diff).toHaveLength(MAX_DETAIL_DIFF_LINES);
    expect(details.omittedLines).toBe(3_000 - MAX_DETAIL_DIFF_LINES);
    expect(details.diff[0]!.text).toHaveLength(MAX_DETAIL_LINE_CHARS);
  });

  it("a failed edit changes nothing and has no details", async () => {
    const { tool, file } = setup();
    file("g.txt", "a\n");
    await tool("read", { file_path: "g.txt" });
    const out = await tool("edit", { file_path: "g.txt", old_string: "zzz", new_string: "y" });
    expect(out.isError).toBe(true);
    expect(out.details).toBeUndefined();
  });
});

describe("grep and glob details", () => {
  it("grep counts matching lines and files, and says when the model saw only some", async () => {
    const { tool, file } = setup();
    file("one.txt", "needle\nhay\nneedle\n");
    file("two.txt", "needle\n");
    expect((await tool("grep", { pattern: "needle" })).details).toEqual({
      kind: "search",
      pattern: "needle",
      matches: 3,
      files: 2,
      truncated: false,
    });
    file("many.txt", "needle\n".repeat(300));
    expect((await tool("grep", { pattern: "needle", path: "many.txt" })).details).toMatchObject({
      matches: 300,
      files: 1,
      truncated: true,
    });
    expect((await tool("grep", { pattern: "absent" })).details).toMatchObject({ matches: 0 });
  });

  it("glob counts the paths found", async () => {
    const { tool, file } = setup();
    file("a.ts", "");
    file("b.ts", "");
    file("c.md", "");
    expect((await tool("glob", { pattern: "*.ts" })).details).toEqual({
      kind: "search",
      pattern: "*.ts",
      matches: 2,
      truncated: false,
    });
    expect((await tool("glob", { pattern: "*.none" })).details).toMatchObject({ matches: 0 });
  });
});

describe("todo_write details", () => {
  it("carry the whole list", async () => {
    const { tool } = setup();
    const todos = [
      { content: "plan", status: "completed" },
      { content: "build", status: "in_progress" },
    ];
    const out = await tool("todo_write", { todos });
    expect(out.text).toBe("Updated todo list: 0 pending, 1 in progress, 1 completed.");
    expect(out.details).toEqual({ kind: "todos", items: todos });
  });
});

describe("web_fetch and web_search details", () => {
  let url = "";
  const server = createServer((request, response) => {
    response.statusCode = request.url === "/missing" ? 404 : 200;
    response.end("héllo");
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  it("web_fetch names the address, the status and the body's size", async () => {
    const { tool } = setup();
    expect((await tool("web_fetch", { url: `${url}/missing` })).details).toEqual({
      kind: "fetch",
      url: `${url}/missing`,
      status: 404,
      bytes: 6,
      truncated: false,
    });
  });

  it("web_search lists the queries and the results' titles and addresses", async () => {
    const { tool, ctx } = setup();
    ctx.services.set("webSearch", {
      search: async (query) => [{ title: `About ${query}`, url: "https://example.org/a", snippet: "s" }],
    });
    expect((await tool("web_search", { queries: ["cats"] })).details).toEqual({
      kind: "web-search",
      queries: ["cats"],
      results: [{ title: "About cats", url: "https://example.org/a" }],
    });
  });
});

describe("bash and job details", () => {
  function bash() {
    const workspace = tempDir();
    const ctx = makeExec({ workspace, sandbox: "danger-full-access" });
    const registry = createStandardRegistry({
      bash: { timeoutMs: 60_000, maxTimeoutMs: 600_000, maxOutputBytes: 1_000 },
    });
    const pipeline = new ToolPipeline({ registry, hooks: new HookBus() });
    const tool = (name: string, args: Record<string, unknown>) => pipeline.run(call(name, args), ctx.exec);
    return { ctx, tool };
  }

  it("a non-zero exit is recorded, not an error", async () => {
    const out = await bash().tool("bash", { description: "fail", command: "exit 3" });
    expect(out.text).toBe("(no output)\n[exit code: 3]");
    expect(out.details).toEqual({ kind: "command", exitCode: 3, truncated: false });
  });

  it("a cut output names where the full output is", async () => {
    const out = await bash().tool("bash", { description: "long", command: "seq 1 2000" });
    const locator = /full output: (spill:\/\/[0-9a-f-]+)/.exec(out.text)?.[1];
    expect(out.details).toEqual({ kind: "command", exitCode: 0, truncated: true, fullOutput: locator });
  });

  it("a command moved to the background names its job; job_output and job_kill report its state", async () => {
    const { tool } = bash();
    const out = await tool("bash", { description: "slow", command: "sleep 30", timeout_ms: 100 });
    const jobId = /background job (job_[0-9a-f]+)/.exec(out.text)?.[1];
    expect(out.details).toEqual({ kind: "command", truncated: false, jobId });
    expect((await tool("job_output", { job_id: jobId })).details).toEqual({
      kind: "job",
      jobId,
      status: "running",
    });
    expect((await tool("job_kill", { job_id: jobId })).details).toMatchObject({
      kind: "job",
      jobId,
      status: "killed",
    });
  });

  it("run_in_background names its job at once; a finished job reports its exit code", async () => {
    const { tool } = bash();
    const out = await tool("bash", { description: "bg", command: "exit 4", run_in_background: true });
    const jobId = /started background job (\S+)/.exec(out.text)?.[1];
    expect(out.details).toEqual({ kind: "command", truncated: false, jobId });
    expect((await tool("job_output", { job_id: jobId, wait: true })).details).toEqual({
      kind: "job",
      jobId,
      status: "failed",
      exitCode: 4,
    });
  });
});
