/**
 * The contender under test: better-dsh's `Agent` with the standard plugin composition, on a real store
 * (a SQLite file in a fresh home, or a fresh PostgreSQL schema), talking to the fake provider through the
 * deepseek adapter. Per-step marks are taken in a `log.onEvents` listener at every `step/start`; the
 * store the agent sees counts its calls (./store-calls.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { Agent } from "../../src/loop/agent.js";
import type { Plugin, RuntimeFacts } from "../../src/loop/plugin.js";
import { createAdapter } from "../../src/model/adapter.js";
import { resolveRoute } from "../../src/model/catalog.js";
import { standardPlugins } from "../../src/presets/standard.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { ToolDefinition } from "../../src/tools/types.js";
import { TEST_MODEL } from "../../test/support/test-model.js";
import { type FakeReply, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { NOOP_DESCRIPTION, NOOP_PARAMETERS, type SessionRun, StepMarks } from "./common.js";
import { type CallStats, countingStore } from "./store-calls.js";

/**
 * Which better-dsh runs. The stores run their default durability, `effects` (store.ts `AppendDurability`):
 * every append is committed before the loop goes on (a killed process loses nothing); it waits for the disk
 * (WAL flush, fsync) only before a side-effecting tool and at a turn's end. Diagnostics: `sqlite-full` and
 * `postgres-on` wait for the disk on every append; `postgres-effects-tool` makes `noop` side-effecting, so
 * every step also waits for the disk before its dispatch.
 */
export type StoreChoice = "sqlite" | "sqlite-full" | "postgres" | "postgres-on" | "postgres-effects-tool";

export const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";

type BenchStore = { store: Store; home: string; dispose(): Promise<void> };

/** A migrated store in fresh state: a new home (SQLite) or a new schema (PostgreSQL), removed by `dispose`. */
async function freshStore(choice: StoreChoice): Promise<BenchStore> {
  const home = mkdtempSync(join(tmpdir(), "bdsh-bench-loop-"));
  const removeHome = (): void => rmSync(home, { recursive: true, force: true });
  if (choice === "sqlite" || choice === "sqlite-full") {
    const store = await openStore({
      home,
      ...(choice === "sqlite-full" ? { sqliteSynchronous: "full" } : {}),
    });
    return {
      store,
      home,
      async dispose() {
        await store.close();
        removeHome();
      },
    };
  }
  const adminUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const schema = `bench_loop_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await adminQuery(adminUrl, `CREATE SCHEMA ${schema}`);
  const url = new URL(adminUrl);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const store = await openStore({
    home,
    databaseUrl: url.toString(),
    ...(choice === "postgres-on" ? { postgresSynchronousCommit: "on" as const } : {}),
  });
  return {
    store,
    home,
    async dispose() {
      await store.close();
      await adminQuery(adminUrl, `DROP SCHEMA ${schema} CASCADE`);
      removeHome();
    },
  };
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * The one trivial tool, registered into the agent's own registry by a plugin (the path every product tool
 * takes: validation, the pre/post-execute hooks, the spill policy); read-only unless asked otherwise.
 * `onCall` sees the agent's facts (the prefix session edits them). The session offers only its toolset, so
 * the request carries the same single tool as every other contender's.
 */
function noopPlugin(readOnly: boolean, onCall: (n: number) => void): Plugin {
  const noop: ToolDefinition<{ n?: number }> = {
    name: "noop",
    toolset: BENCH_TOOLSET,
    description: NOOP_DESCRIPTION,
    parameters: { ...NOOP_PARAMETERS, required: [...NOOP_PARAMETERS.required] },
    concurrency: "safe",
    readOnly,
    async execute(args) {
      const n = typeof args.n === "number" ? args.n : -1;
      onCall(n);
      return { text: `ok ${n}` };
    },
  };
  return { name: "bench-noop", setup: (ctx) => ctx.tools.register(noop) };
}

const BENCH_TOOLSET = "bench";

export type OurSession = SessionRun & {
  bodies: FakeRequest[];
  /** Store calls made while the session ran (setup excluded). */
  storeCalls: CallStats;
};

/**
 * Runs one session of better-dsh against a fresh fake provider serving `script`: one follow-up, then
 * waits for idle. `onTool` runs inside every `noop` call with the agent's mutable facts.
 */
export async function runOurs(
  choice: StoreChoice,
  script: readonly FakeReply[],
  onTool: (n: number, facts: RuntimeFacts) => void = () => {},
  /** Sees the agent before it starts (diagnostics that time its phases). */
  onAgent: (agent: Agent) => void = () => {},
): Promise<OurSession> {
  const bench = await freshStore(choice);
  const fake = await startFakeProvider({ script });
  try {
    const session = await bench.store.createSession({ title: "bench" });
    const adapter = createAdapter(resolveRoute({ provider: "deepseek", baseUrl: fake.url }, {}), {
      env: { DEEPSEEK_API_KEY: "x" },
    });
    const counted = countingStore(bench.store);
    let agent: Agent | undefined;
    agent = new Agent({
      store: counted.store,
      sessionId: session.id,
      owner: `bench-${process.pid}`,
      adapter,
      model: TEST_MODEL,
      session: { allowedToolsets: [BENCH_TOOLSET] },
      plugins: [
        ...standardPlugins({ config: DEFAULT_CONFIG }),
        noopPlugin(choice !== "postgres-effects-tool", (n) => onTool(n, agent!.facts)),
      ],
      workspace: bench.home,
    });
    onAgent(agent);
    const marks = new StepMarks();
    agent.log.onEvents((events) => {
      for (const event of events) if (event.type === "step/start") marks.mark();
    });
    await agent.followup("Call noop until told otherwise.");
    await agent.whenIdle();
    const end = agent.log.last("turn/end");
    if (end?.data.reason !== "completed") {
      throw new Error(`better-dsh (${choice}): turn ended ${JSON.stringify(end?.data)}`);
    }
    return {
      marks,
      requests: fake.requests.length,
      bodies: [...fake.requests],
      storeCalls: counted.calls,
    };
  } finally {
    await fake.close();
    await bench.dispose();
  }
}
