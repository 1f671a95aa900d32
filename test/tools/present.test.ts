/**
 * T22 `present`: deliverable files inside the workspace become `files` details (path, size, media type);
 * anything outside it, reached by `..` or a symlink, or in the harness's home folder, is refused.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { presentTool } from "../../src/tools/files/present-tool.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { call, makeExec, tempDir } from "./support.js";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);

function setup(options: { masked?: string[] } = {}) {
  const workspace = tempDir("bdsh-present-");
  mkdirSync(join(workspace, "out"));
  writeFileSync(join(workspace, "out", "report.csv"), "a,b\n1,2\n");
  writeFileSync(join(workspace, "chart.png"), PNG);
  const registry = new ToolRegistry();
  registry.register(presentTool);
  const pipeline = new ToolPipeline({ registry, hooks: new HookBus() });
  const masked = (options.masked ?? []).map((name) => join(workspace, name));
  const { exec } = makeExec({ workspace }, { maskedPaths: masked });
  return { workspace, run: (files: unknown) => pipeline.run(call("present", { files }), exec) };
}

describe("T22 present", () => {
  it("declares workspace files as files details: relative path, size and media type", async () => {
    const { run } = setup();
    const output = await run(["out/report.csv", "chart.png"]);
    expect(output.isError).toBeFalsy();
    expect(output.text).toBe(
      "Presented 2 files to the user as cards below your reply: out/report.csv (8 bytes), chart.png (12 bytes)",
    );
    expect(output.details).toEqual({
      kind: "files",
      files: [
        { path: "out/report.csv", bytes: 8, mimeType: "text/csv" },
        { path: "chart.png", bytes: 12, mimeType: "image/png" },
      ],
    });
  });

  it("takes absolute paths inside the workspace and names the same file once", async () => {
    const { run, workspace } = setup();
    const output = await run([join(workspace, "chart.png"), "./chart.png"]);
    expect(output.details).toEqual({
      kind: "files",
      files: [{ path: "chart.png", bytes: 12, mimeType: "image/png" }],
    });
  });

  it("refuses a file outside the workspace, by absolute path or by ..", async () => {
    const { run, workspace } = setup();
    const outside = tempDir("bdsh-present-outside-");
    writeFileSync(join(outside, "secret.txt"), "x");
    const absolute = await run([join(outside, "secret.txt")]);
    expect(absolute.isError).toBe(true);
    expect(absolute.text).toBe(
      `Error: cannot present "${join(outside, "secret.txt")}": outside the workspace ${JSON.stringify(workspace)}`,
    );
    const dotdot = await run(["../../etc/passwd"]);
    expect(dotdot.text).toMatch(/^Error: cannot present "\/etc\/passwd": outside the workspace/);
  });

  it("refuses a symlink in the workspace that points out of it", async () => {
    const { run, workspace } = setup();
    symlinkSync("/etc/hostname", join(workspace, "innocent.txt"));
    const output = await run(["innocent.txt"]);
    expect(output.text).toMatch(/^Error: cannot present ".*innocent\.txt": outside the workspace/);
  });

  it("refuses the harness's home folder even inside the workspace, directories and missing files", async () => {
    const { run, workspace } = setup({ masked: [".bdsh-home"] });
    mkdirSync(join(workspace, ".bdsh-home"));
    writeFileSync(join(workspace, ".bdsh-home", "config.yaml"), "x");
    expect((await run([".bdsh-home/config.yaml"])).text).toMatch(
      /^Error: cannot present ".*config\.yaml": the harness's home folder is not available to tools$/,
    );
    expect((await run(["out"])).text).toMatch(/": is a directory$/);
    expect((await run(["nope.pdf"])).text).toMatch(/": not found$/);
  });

  it("is parallel-safe and read-only", () => {
    expect(presentTool.concurrency).toBe("safe");
    expect(presentTool.readOnly).toBe(true);
  });
});
