/**
 * What every real agent process in the tests shares (the crash matrix, the compaction race, the goal crash):
 * the session's store, the fake provider's adapter and the base agent options, all from the environment
 * (STORE_HOME, DATABASE_URL?, SESSION_ID, FAKE_URL), and the `MARK <name>` lines the parent waits for.
 */
import { writeSync } from "node:fs";
import type { AgentOptions } from "../../src/loop/agent.js";
import { createAdapter } from "../../src/model/adapter.js";
import { resolveRoute } from "../../src/model/catalog.js";
import { openStore } from "../../src/store/open-store.js";
import { TEST_MODEL } from "./test-model.js";

export const mark = (name: string): void => {
  writeSync(1, `MARK ${name}\n`);
};

type BaseOptions = Pick<AgentOptions, "store" | "sessionId" | "owner" | "adapter" | "model" | "workspace">;

export async function agentProcessOptions(ownerPrefix: string, env = process.env): Promise<BaseOptions> {
  const store = await openStore({
    home: env.STORE_HOME!,
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
  });
  return {
    store,
    sessionId: env.SESSION_ID!,
    owner: `${ownerPrefix}-${process.pid}`,
    adapter: createAdapter(resolveRoute({ provider: "deepseek", baseUrl: env.FAKE_URL! }, {}), {
      env: { DEEPSEEK_API_KEY: "test" },
    }),
    model: TEST_MODEL,
    workspace: env.STORE_HOME!,
  };
}
