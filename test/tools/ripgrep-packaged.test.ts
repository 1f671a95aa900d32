/**
 * Issue 15 item 7: `glob` and `grep` run the ripgrep `@vscode/ripgrep` ships, so a machine without a
 * system `rg` has both tools. This file runs with a PATH that holds no `rg` at all.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rgPath } from "@vscode/ripgrep";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { chooseRipgrep, RG_PATH_ENV, ripgrepBinary } from "../../src/tools/files/ripgrep.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { createStandardRegistry } from "../../src/tools/standard.js";
import { call, makeExec, tempDir } from "./support.js";

const emptyBin = tempDir("bdsh-no-rg-");
const saved = { PATH: process.env.PATH, override: process.env[RG_PATH_ENV] };

beforeAll(() => {
  // Before anything chooses a ripgrep: this process has no `rg` to find, and no override.
  process.env.PATH = emptyBin;
  delete process.env[RG_PATH_ENV];
});
afterAll(() => {
  process.env.PATH = saved.PATH;
  if (saved.override !== undefined) process.env[RG_PATH_ENV] = saved.override;
  rmSync(emptyBin, { recursive: true, force: true });
});

function setup() {
  const workspace = tempDir();
  const ctx = makeExec({ workspace });
  const pipeline = new ToolPipeline({ registry: createStandardRegistry(), hooks: new HookBus() });
  const tool = async (name: string, args: Record<string, unknown>) =>
    pipeline.run(call(name, args), ctx.exec);
  return { workspace, tool };
}

describe("T13 glob and grep without a system rg", () => {
  it("the PATH of this test really has no rg", () => {
    const result = spawnSync("rg", ["--version"], { env: { PATH: process.env.PATH } });
    expect((result.error as NodeJS.ErrnoException | undefined)?.code).toBe("ENOENT");
  });

  it("uses the packaged binary", () => {
    const rg = ripgrepBinary();
    expect(rg).toMatchObject({ ok: true, source: "packaged", path: rgPath });
    expect(rg.ok && rg.version).toMatch(/^ripgrep \d+\./);
  });

  it("glob finds files", async () => {
    const { workspace, tool } = setup();
    mkdirSync(join(workspace, "src"));
    writeFileSync(join(workspace, "src", "a.ts"), "");
    writeFileSync(join(workspace, "b.md"), "");
    expect((await tool("glob", { pattern: "**/*.ts" })).text).toBe(`${workspace}/src/a.ts`);
  });

  it("grep finds matches", async () => {
    const { workspace, tool } = setup();
    writeFileSync(join(workspace, "a.txt"), "hay\nneedle\n");
    expect((await tool("grep", { pattern: "needle" })).text).toBe(`${workspace}/a.txt:2:needle`);
  });
});

describe(`${RG_PATH_ENV} override`, () => {
  it("runs the binary it names instead of the packaged one", () => {
    const dir = tempDir("bdsh-rg-override-");
    const marker = join(dir, "ran");
    const wrapper = join(dir, "my-rg");
    writeFileSync(wrapper, `#!/bin/sh\necho "$@" >> '${marker}'\nexec '${rgPath}' "$@"\n`);
    chmodSync(wrapper, 0o755);
    const rg = chooseRipgrep({ PATH: emptyBin, [RG_PATH_ENV]: wrapper });
    expect(rg).toMatchObject({ ok: true, source: "override", path: wrapper });
    expect(readFileSync(marker, "utf8")).toBe("--version\n");
    rmSync(dir, { recursive: true, force: true });
  });

  it("an override that does not run is an error naming it, not a silent fallback", () => {
    const rg = chooseRipgrep({ PATH: emptyBin, [RG_PATH_ENV]: "/nonexistent/rg" });
    expect(rg).toEqual({
      ok: false,
      error: `${RG_PATH_ENV}=/nonexistent/rg does not run (\`/nonexistent/rg --version\` failed)`,
    });
  });
});
