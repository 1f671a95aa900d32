/**
 * MCP per-call overhead (issue 18): server-everything's `echo` over stdio, 1,000 calls each way,
 * interleaved in rounds of 50 so both paths see the same machine load:
 * - direct: the official SDK client's `callTool`, nothing else;
 * - ours: the model's call as the loop hands it over (a raw JSON arguments string) through the agent's
 *   `ToolPipeline` (pre-execute hooks incl. the command guard, argument validation, the execute wrapper
 *   with its timeout, post-execute incl. the spill policy and the repeat reminder) to the registered
 *   `mcp__everything__echo`, our `McpConnection.callTool`, and the T21 result formatting and redaction.
 * Each path has its own server process (stdio is one client per process). Reports p50/p90/p99 per call,
 * the p50 overhead (ours − direct) and the ratio. Aim: overhead p50 under 0.3 ms.
 *
 *   node --import tsx bench/mcp/run.ts [calls]
 */
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mcpServerSchema } from "../../src/config/mcp-servers.js";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { createServiceRegistry, type PluginContext } from "../../src/loop/plugin.js";
import { toolCallRequest } from "../../src/loop/tool-host.js";
import { McpPool } from "../../src/mcp/pool.js";
import { attachMcpTools } from "../../src/mcp/tools.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ServiceMap } from "../../src/tools/services.js";
import { MemoryBlobStore } from "../../src/tools/spill/blob-store.js";
import { installToolPolicies } from "../../src/tools/standard.js";
import type { ToolExec } from "../../src/tools/types.js";

const CALLS = Number(process.argv[2] ?? 1000);
const ROUND = 50;
const WARMUP = 200;
const EVERYTHING = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);

// --- direct SDK client ---
const direct = new Client({ name: "bench-direct", version: "1" }, { capabilities: {} });
await direct.connect(
  new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], stderr: "pipe" }),
);

// --- ours: pool, registry, the agent's pipeline and policies ---
const pool = new McpPool(
  { everything: mcpServerSchema.parse({ command: process.execPath, args: [EVERYTHING, "stdio"] }) },
  { env: {}, cwd: process.cwd() },
);
const hooks = new HookBus();
const registry = new ToolRegistry();
const services = createServiceRegistry();
const ctx = {
  hooks,
  services,
  tools: { registry, offer: () => [] },
  workspace: process.cwd(),
  log: { add: () => [] },
} as unknown as PluginContext;
await attachMcpTools(ctx, { servers: pool.servers, env: {}, pool, images: false });
const policies = installToolPolicies(hooks, { maxInlineTokens: 12_500, commands: { allowlist: [] } });
const pipeline = new ToolPipeline({ registry, hooks });
const exec: ToolExec = {
  callId: "c",
  toolName: "mcp__everything__echo",
  session: { sessionId: "bench", kind: "main", depth: 0 },
  workspace: process.cwd(),
  cwd: process.cwd(),
  sandbox: "workspace-write",
  approval: "never",
  signal: new AbortController().signal,
  concludeTurn: () => {},
  services: new ServiceMap({ blobs: new MemoryBlobStore() }),
};

let n = 0;
const viaDirect = async () => {
  const message = `m${n++}`;
  const result = (await direct.callTool({ name: "echo", arguments: { message } })) as {
    content: Array<{ text: string }>;
  };
  if (result.content[0]?.text !== `Echo: ${message}`) throw new Error("direct: wrong answer");
};
const viaOurs = async () => {
  const message = `m${n++}`;
  const call = toolCallRequest(`c${n}`, "mcp__everything__echo", JSON.stringify({ message }));
  const output = await pipeline.run(call, { ...exec, callId: call.callId });
  if (output.text !== `Echo: ${message}`) throw new Error(`ours: wrong answer: ${output.text}`);
};

async function timed(body: () => Promise<void>, count: number, into: number[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await body();
    into.push(performance.now() - start);
  }
}

const ignore: number[] = [];
await timed(viaDirect, WARMUP, ignore);
await timed(viaOurs, WARMUP, ignore);
const directTimes: number[] = [];
const oursTimes: number[] = [];
for (let done = 0; done < CALLS; done += ROUND) {
  const count = Math.min(ROUND, CALLS - done);
  await timed(viaDirect, count, directTimes);
  await timed(viaOurs, count, oursTimes);
}

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const ms = (value: number) => `${value.toFixed(3)} ms`;
const d50 = pct(directTimes, 50);
const o50 = pct(oursTimes, 50);
console.log(
  `MCP per-call overhead, server-everything echo over stdio, ${CALLS} calls each (node ${process.version}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")})`,
);
console.log(`| path | p50 | p90 | p99 |`);
console.log(`| --- | --- | --- | --- |`);
for (const [name, times] of [
  ["direct SDK callTool", directTimes],
  ["ours: pipeline → mcp__everything__echo", oursTimes],
] as const)
  console.log(`| ${name} | ${ms(pct(times, 50))} | ${ms(pct(times, 90))} | ${ms(pct(times, 99))} |`);
console.log(
  `overhead p50: ${ms(o50 - d50)} (aim < 0.3 ms); ratio ours/direct p50: ${(o50 / d50).toFixed(2)}×`,
);

policies.dispose();
await direct.close();
await pool.close();
