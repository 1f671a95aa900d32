/**
 * Model-layer benchmark (issue 3, item 10): SSE parse + assembly throughput on a 5 MB recorded-style
 * OpenAI-format stream (reasoning, text, one large tool call), served by the fake provider over local
 * HTTP in 4 KiB pieces. In one run, on the same bytes from the same server:
 *   - better-dsh: `createAdapter` (openai-compatible preset) drained with `collectReply`;
 *   - AI SDK: `@ai-sdk/openai-compatible` through `streamText`, draining `fullStream`;
 *   - pi-ai: `@mariozechner/pi-ai` `stream()` with an openai-completions model, drained to its result.
 * Each one must assemble the same tool-call arguments, or the run fails. Prints MB/s, parts/s (each
 * library's own stream items), and the ratios of better-dsh against both peers.
 *
 *   node --import tsx bench/model/run.ts [megabytes] [runs]
 */
import { performance } from "node:perf_hooks";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { type Context, type Model, stream as piStream, Type } from "@mariozechner/pi-ai";
import { jsonSchema, streamText, tool } from "ai";
import { collectReply, createAdapter, resolveRoute } from "../../src/model/index.js";
import { startFakeProvider } from "../../testing/fake-provider/index.js";
import { buildStream } from "./stream.js";

const MEGABYTES = Number(process.argv[2] ?? 5);
const RUNS = Number(process.argv[3] ?? 7);
const WARMUP = 2;
const PIECE = 4096;

type Outcome = { parts: number; argumentsLength: number };
type Contender = {
  name: string;
  once(baseUrl: string): Promise<Outcome>;
  /** Fewer runs on the tool-call stream: pi-ai re-parses the partial tool JSON on every delta (slow). */
  runs?: number;
};

const WRITE_SCHEMA = {
  type: "object",
  properties: { path: { type: "string" }, content: { type: "string" } },
  required: ["path", "content"],
} as const;

const ours: Contender = {
  name: "better-dsh",
  async once(baseUrl) {
    const adapter = createAdapter(resolveRoute({ provider: "openai-compatible", baseUrl }, {}), { env: {} });
    let parts = 0;
    const reply = await collectReply(
      adapter.stream({
        model: "deepseek-reasoner",
        system: "",
        messages: [{ role: "user", text: "write the file" }],
        tools: [{ name: "write", description: "Write a file.", parameters: WRITE_SCHEMA }],
        effort: "high",
      }),
      () => parts++,
    );
    const call = reply.blocks.find((b) => b.type === "tool-call");
    return { parts, argumentsLength: call?.type === "tool-call" ? call.arguments.length : -1 };
  },
};

const aiSdk: Contender = {
  name: "AI SDK (openai-compatible)",
  async once(baseUrl) {
    const provider = createOpenAICompatible({ name: "bench", baseURL: baseUrl, apiKey: "bench" });
    const result = streamText({
      model: provider.chatModel("deepseek-reasoner"),
      prompt: "write the file",
      tools: {
        write: tool({
          description: "Write a file.",
          inputSchema: jsonSchema({ ...WRITE_SCHEMA, required: [...WRITE_SCHEMA.required] }),
        }),
      },
      maxRetries: 0,
    });
    let parts = 0;
    let argumentsLength = -1;
    for await (const part of result.fullStream) {
      parts++;
      if (part.type === "tool-call") argumentsLength = JSON.stringify(part.input).length;
      if (part.type === "error") throw part.error;
    }
    return { parts, argumentsLength };
  },
};

const pi: Contender = {
  name: "pi-ai",
  runs: 2,
  async once(baseUrl) {
    const model: Model<"openai-completions"> = {
      id: "deepseek-reasoner",
      name: "bench",
      api: "openai-completions",
      provider: "bench",
      baseUrl,
      reasoning: true,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 262_144,
      maxTokens: 32_768,
    };
    const context: Context = {
      messages: [{ role: "user", content: "write the file", timestamp: Date.now() }],
      tools: [
        {
          name: "write",
          description: "Write a file.",
          parameters: Type.Object({ path: Type.String(), content: Type.String() }),
        },
      ],
    };
    let parts = 0;
    const events = piStream(model, context, { apiKey: "bench" });
    for await (const _event of events) parts++;
    const message = await events.result();
    if (message.stopReason === "error") throw new Error(`pi-ai: ${message.errorMessage}`);
    const call = message.content.find((c) => c.type === "toolCall");
    return { parts, argumentsLength: call?.type === "toolCall" ? JSON.stringify(call.arguments).length : -1 };
  },
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

type Row = { name: string; ms: number; mbps: number; partsPerSec: number; parts: number; runs: number };

async function scenario(title: string, withToolCall: boolean): Promise<void> {
  const data = buildStream(MEGABYTES * 1024 * 1024, withToolCall);
  const mb = data.bytes.length / (1024 * 1024);
  const fake = await startFakeProvider({ script: () => ({ raw: data.bytes, rawChunkSizes: [PIECE] }) });
  const baseUrl = `${fake.url}/v1`;
  const expectedLength = withToolCall ? JSON.stringify(JSON.parse(data.argumentsText)).length : -1;
  console.log(`## ${title}`);
  console.log(
    `stream: ${mb.toFixed(2)} MB, ${data.frames} frames (reasoning ${data.reasoningChars} chars, text ${data.textChars} chars, tool arguments ${data.argumentsText.length} chars); ${PIECE}-byte pieces; median of the runs after warm-up\n`,
  );
  const rows: Row[] = [];
  for (const contender of [ours, aiSdk, pi]) {
    const times: number[] = [];
    let parts = 0;
    const slow = withToolCall && contender.runs !== undefined;
    const runs = slow ? Math.min(RUNS, contender.runs ?? RUNS) : RUNS;
    const warmup = slow ? 1 : WARMUP;
    for (let i = 0; i < warmup + runs; i++) {
      const start = performance.now();
      const outcome = await contender.once(baseUrl);
      const ms = performance.now() - start;
      if (outcome.argumentsLength !== expectedLength) {
        throw new Error(
          `${contender.name} assembled ${outcome.argumentsLength} argument chars, expected ${expectedLength}`,
        );
      }
      parts = outcome.parts;
      if (i >= warmup) times.push(ms);
    }
    const ms = median(times);
    rows.push({
      name: contender.name,
      ms,
      mbps: mb / (ms / 1000),
      partsPerSec: parts / (ms / 1000),
      parts,
      runs,
    });
  }
  await fake.close();
  print(rows);
}

function print(rows: Row[]): void {
  const pad = (s: string, n: number): string => s.padEnd(n);
  console.log(
    `${pad("implementation", 28)}${pad("runs", 6)}${pad("ms", 10)}${pad("MB/s", 10)}${pad("parts", 10)}parts/s`,
  );
  for (const r of rows) {
    console.log(
      `${pad(r.name, 28)}${pad(String(r.runs), 6)}${pad(r.ms.toFixed(1), 10)}${pad(r.mbps.toFixed(1), 10)}${pad(String(r.parts), 10)}${Math.round(r.partsPerSec)}`,
    );
  }
  const [self, ...peers] = rows;
  console.log("");
  for (const peer of peers) {
    console.log(`better-dsh vs ${peer.name}: ${(self!.mbps / peer.mbps).toFixed(2)}× throughput (MB/s)`);
  }
  console.log("");
}

async function main(): Promise<void> {
  await scenario("reasoning, text and one large tool call (the issue's stream)", true);
  await scenario("reasoning and text only (SSE framing + JSON, no tool-argument accumulation)", false);
}

await main();
