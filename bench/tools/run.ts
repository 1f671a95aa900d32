/**
 * Tools benchmark (issue 5 item 11):
 * - bash spawn overhead per call: `bash -c true` spawned directly, through the `bash` tool (pipeline
 *   included) unsandboxed, and under bubblewrap;
 * - `grep` on a generated 50,000-file tree against running `rg` directly with the same arguments;
 * - `read` of the last page of a 50 MB file;
 * - pipeline overhead per call: a no-op tool through the full pipeline (standard policies installed)
 *   against calling its `execute` directly.
 *
 *   node --import tsx bench/tools/run.ts
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { parseToolArguments } from "../../src/tools/arguments.js";
import { FileObservations } from "../../src/tools/files/file-observations.js";
import { InMemoryJobStore } from "../../src/tools/jobs/job-store.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { ServiceMap } from "../../src/tools/services.js";
import { MemoryBlobStore } from "../../src/tools/spill/blob-store.js";
import { createStandardRegistry, installToolPolicies } from "../../src/tools/standard.js";
import { bubblewrapAvailable } from "../../src/tools/terminal/bubblewrap.js";
import { LocalEnvironment } from "../../src/tools/terminal/local.js";
import type { AnyToolDefinition, SandboxMode, ToolExec } from "../../src/tools/types.js";

const root = mkdtempSync(join(tmpdir(), "bdsh-bench-tools-"));
const workspace = join(root, "ws");
mkdirSync(workspace);

const registry = createStandardRegistry();
const noop: AnyToolDefinition = {
  name: "noop",
  toolset: "bench",
  description: "",
  parameters: {
    type: "object",
    properties: { x: { type: "string" } },
    required: ["x"],
    additionalProperties: false,
  },
  execute: async () => ({ text: "ok" }),
};
registry.register(noop);
const hooks = new HookBus();
installToolPolicies(hooks, { maxInlineTokens: 12_500, commands: { allowlist: [] } });
const pipeline = new ToolPipeline({ registry, hooks });
const services = new ServiceMap({
  blobs: new MemoryBlobStore(),
  jobs: new InMemoryJobStore(),
  fileObservations: new FileObservations(),
  terminal: new LocalEnvironment({ cwd: workspace, stripEnvKeys: [] }),
});

function exec(sandbox: SandboxMode = "danger-full-access"): ToolExec {
  return {
    callId: "c",
    toolName: "",
    session: { sessionId: "bench", kind: "main", depth: 0 },
    workspace,
    cwd: workspace,
    sandbox,
    approval: "never",
    signal: new AbortController().signal,
    concludeTurn: () => {},
    services,
  };
}

function request(name: string, args: Record<string, unknown>) {
  const raw = JSON.stringify(args);
  return { callId: "c", name, rawArguments: raw, args: parseToolArguments(raw) };
}

async function perCall(n: number, body: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(n, 20); i += 1) await body();
  const start = performance.now();
  for (let i = 0; i < n; i += 1) await body();
  return (performance.now() - start) / n;
}

function spawnTrue(): Promise<void> {
  return new Promise((resolve) =>
    spawn("bash", ["-c", "true"], { stdio: "ignore" }).once("close", () => resolve()),
  );
}

const rows: [string, string][] = [];
const ms = (value: number) => `${value.toFixed(3)} ms`;

// Pipeline overhead.
const direct = await perCall(100_000, () => noop.execute({ x: "a" }, exec()));
const piped = await perCall(100_000, () => pipeline.run(request("noop", { x: "a" }), exec()));
rows.push(["noop execute, direct", ms(direct)]);
rows.push(["noop through the pipeline (+policies)", ms(piped)]);
rows.push(["pipeline overhead per call", ms(piped - direct)]);

// bash spawn overhead.
const bashCall = (sandbox: SandboxMode) => () =>
  pipeline.run(request("bash", { description: "bench", command: "true" }), exec(sandbox));
rows.push(["spawn bash -c true directly", ms(await perCall(200, spawnTrue))]);
rows.push(["bash tool, unsandboxed", ms(await perCall(200, bashCall("danger-full-access")))]);
if (bubblewrapAvailable())
  rows.push(["bash tool, under bwrap", ms(await perCall(200, bashCall("workspace-write")))]);
else rows.push(["bash tool, under bwrap", "bwrap unavailable"]);

// grep on 50,000 files.
const tree = join(workspace, "tree");
for (let d = 0; d < 500; d += 1) {
  const dir = join(tree, `d${d}`);
  mkdirSync(dir, { recursive: true });
  for (let f = 0; f < 100; f += 1) {
    const needle = (d * 100 + f) % 997 === 0 ? "NEEDLE_TOKEN\n" : "";
    writeFileSync(join(dir, `f${f}.txt`), `line one\nline two ${d}-${f}\n${needle}line three\n`);
  }
}
const rgArgs = [
  "--line-number",
  "--no-heading",
  "--with-filename",
  "--null",
  "--color",
  "never",
  "--regexp",
  "NEEDLE_TOKEN",
  "--",
  tree,
];
const rgDirect = await perCall(5, async () => spawnSync("rg", rgArgs, { stdio: "ignore" }));
const grepTool = await perCall(5, () =>
  pipeline.run(request("grep", { pattern: "NEEDLE_TOKEN", path: tree }), exec()),
);
rows.push(["rg directly, 50,000 files", ms(rgDirect)]);
rows.push(["grep tool, 50,000 files", ms(grepTool)]);

// read of a 50 MB file's last page.
const big = join(root, "big.txt");
const line = `${"x".repeat(99)}\n`;
writeFileSync(big, line.repeat(500_000));
const readLast = await perCall(10, () =>
  pipeline.run(request("read", { file_path: big, offset: 499_001 }), exec()),
);
rows.push(["read last page of a 50 MB file", ms(readLast)]);

console.log("| measure | per call |\n|---|---|");
for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
rmSync(root, { recursive: true, force: true });
process.exit(0);
