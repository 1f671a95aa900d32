import { describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { installSpillPolicy } from "../../src/tools/spill/spill-policy.js";
import { createStandardRegistry } from "../../src/tools/standard.js";
import type { AnyToolDefinition } from "../../src/tools/types.js";
import { call, makeExec, tempDir } from "./support.js";

const big: AnyToolDefinition = {
  name: "big",
  toolset: "test",
  description: "",
  parameters: { type: "object", properties: { n: { type: "integer" } } },
  execute: async (args: { n: number }) => ({
    text: Array.from({ length: args.n }, (_, i) => `line ${i + 1}`).join("\n"),
  }),
};

function setup(maxInlineTokens = 100) {
  const registry = createStandardRegistry();
  registry.register(big);
  const hooks = new HookBus();
  installSpillPolicy(hooks, { maxInlineTokens });
  const ctx = makeExec({ workspace: tempDir() });
  const pipeline = new ToolPipeline({ registry, hooks });
  return {
    ctx,
    run: (name: string, args: Record<string, unknown>) => pipeline.run(call(name, args), ctx.exec),
  };
}

describe("C14 spill policy", () => {
  it("cuts to head, [...], tail and the notice, and stores the full text", async () => {
    const { run, ctx } = setup(100);
    const output = await run("big", { n: 1000 });
    const budget = 400;
    const full = Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`).join("\n");
    const head = full.slice(0, budget / 2);
    const tail = full.slice(full.length - budget / 2);
    const omitted = Buffer.byteLength(full) - budget;
    expect(output.text).toBe(
      `${head}\n\n[...]\n\n${tail}\n\n(Omitted ${omitted} bytes. Full formatted result stored at: spill://${output.spill?.blobId}. Use read with offset/limit, or grep this path to search within it.)`,
    );
    expect((await ctx.blobs.getBlob(output.spill?.blobId ?? ""))?.content.toString()).toBe(full);
  });

  it("leaves results under the budget alone", async () => {
    const { run } = setup(100);
    expect((await run("big", { n: 3 })).text).toBe("line 1\nline 2\nline 3");
  });

  it("keeps the inline content when storing fails", async () => {
    const { run, ctx } = setup(10);
    ctx.services.set("blobs", {
      putBlob: () => Promise.reject(new Error("db down")),
      getBlob: async () => undefined,
    });
    const output = await run("big", { n: 100 });
    expect(output.text.split("\n")).toHaveLength(100);
    expect(output.metadata?.spillWarning).toBe("spill-policy: db down; keeping the inline content");
  });

  it("C16 reads and greps the locator with read's footers", async () => {
    const { run } = setup(100);
    const { spill } = await run("big", { n: 3000 });
    const locator = `spill://${spill?.blobId}`;
    const page = await run("read", { file_path: locator, offset: 2001, limit: 2 });
    expect(page.text).toBe(
      `<path>${locator}</path>\n<type>spill</type>\n<content>\n2001: line 2001\n2002: line 2002\n(Showing lines 2001-2002 of 3000. Use offset=2003 to continue.)\n</content>`,
    );
    expect((await run("grep", { pattern: "^line 2999$", path: locator })).text).toBe(
      `${locator}:2999:line 2999`,
    );
  });

  it("exempts read results", async () => {
    const { run, ctx } = setup(10);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(`${ctx.exec.workspace}/f`, "x".repeat(500));
    expect((await run("read", { file_path: "f" })).spill).toBeUndefined();
  });
});
