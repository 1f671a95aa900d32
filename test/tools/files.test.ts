import {
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { createStandardRegistry } from "../../src/tools/standard.js";
import type { SandboxMode } from "../../src/tools/types.js";
import { call, makeExec, tempDir } from "./support.js";

const outside = tempDir("bdsh-outside-", "/var/tmp");
afterAll(() => rmSync(outside, { recursive: true, force: true }));

function setup(sandbox: SandboxMode = "workspace-write") {
  const workspace = tempDir();
  const ctx = makeExec({ workspace, sandbox });
  const pipeline = new ToolPipeline({ registry: createStandardRegistry(), hooks: new HookBus() });
  const tool = async (name: string, args: Record<string, unknown>) =>
    pipeline.run(call(name, args), ctx.exec);
  return { workspace, ctx, tool };
}

describe("T10 read", () => {
  it("numbers lines and ends with the end-of-file footer", async () => {
    const { workspace, tool } = setup();
    writeFileSync(join(workspace, "a.txt"), "one\r\ntwo\n");
    expect((await tool("read", { file_path: "a.txt" })).text).toBe(
      `<path>${workspace}/a.txt</path>\n<type>file</type>\n<content>\n1: one\n2: two\n(End of file - total 2 lines)\n</content>`,
    );
  });

  it("pages with offset and limit", async () => {
    const { workspace, tool } = setup();
    writeFileSync(join(workspace, "n.txt"), Array.from({ length: 5300 }, (_, i) => `l${i + 1}`).join("\n"));
    const first = (await tool("read", { file_path: "n.txt" })).text;
    expect(first).toContain("(Showing lines 1-2000 of 5300. Use offset=2001 to continue.)");
    const mid = (await tool("read", { file_path: "n.txt", offset: 2001, limit: 10 })).text;
    expect(mid).toContain("2001: l2001\n");
    expect(mid).toContain("(Showing lines 2001-2010 of 5300. Use offset=2011 to continue.)");
    expect((await tool("read", { file_path: "n.txt", offset: 5300 })).text).toContain(
      "(End of file - total 5300 lines)",
    );
  });

  it("caps output at 51,200 bytes and cuts long lines at 2000 chars", async () => {
    const { workspace, tool } = setup();
    writeFileSync(
      join(workspace, "wide.txt"),
      Array.from({ length: 100 }, () => "x".repeat(3000)).join("\n"),
    );
    const text = (await tool("read", { file_path: "wide.txt" })).text;
    expect(text).toContain(`1: ${"x".repeat(2000)}… (line truncated to 2000 chars)`);
    expect(text).toMatch(/\(Output capped\. Showing lines 1-(\d+)\. Use offset=\d+ to continue\.\)/);
    expect(Buffer.byteLength(text)).toBeLessThan(52_000);
  });

  it("reports not found, binary files and an offset out of range", async () => {
    const { workspace, tool } = setup();
    writeFileSync(join(workspace, "bin"), Buffer.from([1, 0, 2]));
    writeFileSync(join(workspace, "short"), "a\nb\n");
    expect((await tool("read", { file_path: "nope" })).text).toBe(
      `Error: cannot read "${workspace}/nope": not found`,
    );
    expect((await tool("read", { file_path: "bin" })).text).toBe(
      `Error: cannot read "${workspace}/bin": binary file`,
    );
    expect((await tool("read", { file_path: "short", offset: 9 })).text).toBe(
      `Error: offset 9 is out of range for "${workspace}/short" (2 lines)`,
    );
  });
});

describe("T11 write and edit with read-before-write (C18)", () => {
  it("creates a new file without a read, then requires a read to replace an existing one", async () => {
    const { workspace, tool } = setup();
    expect((await tool("write", { file_path: "new.txt", content: "a" })).text).toBe(
      `Created file ${workspace}/new.txt`,
    );
    writeFileSync(join(workspace, "old.txt"), "old");
    expect((await tool("write", { file_path: "old.txt", content: "b" })).text).toBe(
      `Error: cannot modify "${workspace}/old.txt": file has not been read — read the file, then retry`,
    );
    await tool("read", { file_path: "old.txt" });
    expect((await tool("write", { file_path: "old.txt", content: "b" })).text).toBe(
      `Updated file ${workspace}/old.txt`,
    );
    expect(readFileSync(join(workspace, "old.txt"), "utf8")).toBe("b");
  });

  it("refuses a file changed since it was read", async () => {
    const { workspace, tool } = setup();
    const path = join(workspace, "f.txt");
    writeFileSync(path, "one");
    await tool("read", { file_path: "f.txt" });
    writeFileSync(path, "changed!");
    utimesSync(path, new Date(), new Date(Date.now() + 5_000));
    expect((await tool("edit", { file_path: "f.txt", old_string: "changed", new_string: "x" })).text).toBe(
      `Error: cannot edit "${path}": file changed since it was read — re-read the file, then retry`,
    );
  });

  it("edits literally, keeps CRLF, and words the failures as the seed does", async () => {
    const { workspace, tool } = setup();
    const path = join(workspace, "c.txt");
    writeFileSync(path, "a = 1;\r\nb = 1;\r\n");
    await tool("read", { file_path: "c.txt" });
    expect((await tool("edit", { file_path: "c.txt", old_string: "= 1;", new_string: "= 2;" })).text).toBe(
      `Error: old_string matched 2 times in "${path}"; provide a more specific old_string or set replace_all to true`,
    );
    expect((await tool("edit", { file_path: "c.txt", old_string: "zzz", new_string: "y" })).text).toBe(
      `Error: old_string was not found in "${path}"`,
    );
    expect((await tool("edit", { file_path: "c.txt", old_string: "a", new_string: "a" })).text).toBe(
      "Error: old_string and new_string must differ",
    );
    expect(
      (await tool("edit", { file_path: "c.txt", old_string: "a = 1;\nb", new_string: "a = 3;\nb" })).text,
    ).toBe(`The file ${path} has been updated successfully.`);
    expect(
      (await tool("edit", { file_path: "c.txt", old_string: "1", new_string: "(?)", replace_all: true }))
        .text,
    ).toBe(`The file ${path} has been updated successfully. All occurrences were successfully replaced.`);
    expect(readFileSync(path, "utf8")).toBe("a = 3;\r\nb = (?);\r\n");
  });
});

describe("T17 file sandbox on real paths", () => {
  const denied = (path: string, mode = "workspace-write") =>
    `Error: cannot write "${path}": [sandbox: file access denied under ${mode} mode]`;

  it("denies a write outside the workspace, via .., and through a symlink", async () => {
    const { workspace, tool } = setup();
    symlinkSync(outside, join(workspace, "link"));
    expect((await tool("write", { file_path: `${outside}/a`, content: "x" })).text).toBe(
      denied(`${outside}/a`),
    );
    const dotdot = `../../../..${outside}/b`;
    expect((await tool("write", { file_path: dotdot, content: "x" })).text).toBe(
      denied(join(workspace, dotdot)),
    );
    expect((await tool("write", { file_path: "link/c", content: "x" })).text).toBe(
      denied(`${workspace}/link/c`),
    );
    expect(readdirSync(outside)).toEqual([]);
  });

  it("denies every write under read-only and none under danger-full-access", async () => {
    const ro = setup("read-only");
    expect((await ro.tool("write", { file_path: "a", content: "x" })).text).toBe(
      denied(`${ro.workspace}/a`, "read-only"),
    );
    const full = setup("danger-full-access");
    expect((await full.tool("write", { file_path: `${outside}/full`, content: "x" })).text).toBe(
      `Created file ${outside}/full`,
    );
    rmSync(`${outside}/full`);
  });
});

describe("T13 glob and grep", () => {
  it("glob lists paths newest first and says No files found", async () => {
    const { workspace, tool } = setup();
    writeFileSync(join(workspace, "old.ts"), "");
    writeFileSync(join(workspace, "new.ts"), "");
    utimesSync(join(workspace, "old.ts"), new Date(1_000_000), new Date(1_000_000));
    expect((await tool("glob", { pattern: "*.ts" })).text).toBe(`${workspace}/new.ts\n${workspace}/old.ts`);
    expect((await tool("glob", { pattern: "*.rs" })).text).toBe("No files found");
  });

  it("glob stores the overflow past 100 paths", async () => {
    const { workspace, tool } = setup();
    for (let i = 0; i < 130; i += 1) writeFileSync(join(workspace, `f${i}.txt`), "");
    const text = (await tool("glob", { pattern: "*.txt" })).text;
    expect(text.split("\n")).toHaveLength(101);
    expect(text).toMatch(
      /\n\(Showing 100 of 130 paths Full sorted result stored at: spill:\/\/\S+\. Use read with offset\/limit, or grep this path to search within it\.\)$/,
    );
  });

  it("grep returns sorted path:line:text, caps at 250, and says No matches found", async () => {
    const { workspace, tool } = setup();
    mkdirSync(join(workspace, "d"));
    writeFileSync(join(workspace, "d", "b.txt"), "needle\nhay\nneedle\n");
    writeFileSync(join(workspace, "a.txt"), "needle\n");
    expect((await tool("grep", { pattern: "needle" })).text).toBe(
      `${workspace}/a.txt:1:needle\n${workspace}/d/b.txt:1:needle\n${workspace}/d/b.txt:3:needle`,
    );
    expect((await tool("grep", { pattern: "absent" })).text).toBe("No matches found");
    writeFileSync(join(workspace, "many.txt"), "needle\n".repeat(300));
    const text = (await tool("grep", { pattern: "needle", path: "many.txt" })).text;
    expect(text).toMatch(/\(Showing 250 of 300 matches Full sorted result stored at: spill:\/\//);
  });

  it("grep cuts lines at 2000 bytes", async () => {
    const { workspace, tool } = setup();
    writeFileSync(join(workspace, "w.txt"), `needle${"y".repeat(5000)}\n`);
    const text = (await tool("grep", { pattern: "needle" })).text;
    expect(text.endsWith("… (line truncated to 2000 bytes)")).toBe(true);
    expect(Buffer.byteLength(text)).toBeLessThan(2100);
  });
});
