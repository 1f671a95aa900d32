/**
 * Issue 15 / M20: `sessions show` prints the session's usage (requests, input, cached input apart, output)
 * and cost, and the total with children when it has any; `bdsh run` ends with the run's cost. A real
 * store (SQLite, then PostgreSQL), the real CLI, the scripted provider at the network edge.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
import { runCli } from "../support/run-cli.js";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const USAGE = { input: 1000, cacheRead: 500, output: 200 };
// deepseek-v4-flash (the default model): 1000 × 0.3 + 500 × 0.006 + 200 × 1.2 = 543 micro-dollars.
const COST = "$0.00054";

const stores: Array<[string, () => NodeJS.ProcessEnv]> = [
  ["SQLite", () => ({})],
  ["PostgreSQL", () => ({ DATABASE_URL: testDatabaseUrl() })],
];

for (const [name, storeEnv] of stores) {
  describe(`sessions show usage (${name})`, () => {
    function environment(url: string): { env: NodeJS.ProcessEnv; work: string } {
      const home = mkdtempSync(join(tmpdir(), "bdsh-show-"));
      const work = mkdtempSync(join(tmpdir(), "bdsh-show-work-"));
      return {
        env: { BDSH_HOME: home, BDSH_BASE_URL: url, DEEPSEEK_API_KEY: "sk-test-show", ...storeEnv() },
        work,
      };
    }

    async function runJson(args: string[], env: NodeJS.ProcessEnv, work: string): Promise<string> {
      const result = await runCli(["run", "--json", ...args], env, work);
      expect(result.code).toBe(0);
      return (JSON.parse(result.stdout.split("\n")[0]!) as LogEvent).sessionId;
    }

    it("prints tokens, requests and cost; the run's end summary shows the same cost", async () => {
      fake = await startFakeProvider({
        script: [
          { text: "one", usage: USAGE },
          { text: "two", usage: USAGE },
        ],
      });
      const { env, work } = environment(fake.url);
      const run = await runCli(["run", "first"], env, work);
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/^\d+s · 1\.5k in \(500 cached\) · 200 out · 1 request · \$0\.00054\n/);
      const id = /session (\S+) ·/.exec(run.stderr)![1]!;
      const resumed = await runCli(["sessions", "resume", id, "second"], env, work);
      expect(resumed.code).toBe(0);
      const show = await runCli(["sessions", "show", id], env, work);
      expect(show.code).toBe(0);
      expect(show.stdout).toContain("usage:     3k in (1k cached) · 400 out · 2 requests · $0.0011\n");
      expect(show.stdout).not.toContain("with children");
    });

    it("adds the total with children when the session has a fork that did work", async () => {
      fake = await startFakeProvider({
        script: [
          { text: "parent", usage: USAGE },
          { text: "child", usage: { input: 3000, output: 100 } },
        ],
      });
      const { env, work } = environment(fake.url);
      const parent = await runJson(["parent task"], env, work);
      const fork = await runCli(["sessions", "fork", parent], env, work);
      expect(fork.code).toBe(0);
      const child = fork.stdout.trim();
      expect((await runCli(["sessions", "resume", child, "child task"], env, work)).code).toBe(0);

      const show = await runCli(["sessions", "show", parent], env, work);
      expect(show.stdout).toContain(`usage:     1.5k in (500 cached) · 200 out · 1 request · ${COST}\n`);
      // 4000 × 0.3 + 500 × 0.006 + 300 × 1.2 = 1563 micro-dollars.
      expect(show.stdout).toContain(
        "  with children: 4.5k in (500 cached) · 300 out · 2 requests · $0.0016\n",
      );
      // The fork counts only its own request, not the parent's copied one.
      const forkShow = await runCli(["sessions", "show", child], env, work);
      expect(forkShow.stdout).toContain("usage:     3k in · 100 out · 1 request · $0.001\n");
    });

    it("an unpriced model says cost unknown, in show; the run's summary shows no cost at all", async () => {
      fake = await startFakeProvider({ script: [{ text: "hi", usage: USAGE }] });
      const { env, work } = environment(fake.url);
      const run = await runCli(["--model", "no-such-model-x", "run", "hello"], env, work);
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/^\d+s · 1\.5k in \(500 cached\) · 200 out · 1 request\n/);
      expect(run.stderr).not.toContain("$");
      const id = /session (\S+) ·/.exec(run.stderr)![1]!;
      const show = await runCli(["sessions", "show", id], env, work);
      expect(show.stdout).toContain("usage:     1.5k in (500 cached) · 200 out · 1 request · cost unknown\n");
    });

    it("model.price in the config prices a model the table does not know", async () => {
      fake = await startFakeProvider({ script: [{ text: "hi", usage: { input: 1_000_000, output: 0 } }] });
      const { env, work } = environment(fake.url);
      writeFileSync(
        join(env.BDSH_HOME!, "config.yaml"),
        "model:\n  id: my-local-model\n  price:\n    input: 2\n    cached_input: 0.5\n    output: 4\n",
      );
      const run = await runCli(["run", "hello"], env, work);
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/^\d+s · 1M in · 0 out · 1 request · \$2\.00\n/);
      const id = /session (\S+) ·/.exec(run.stderr)![1]!;
      const show = await runCli(["sessions", "show", id], env, work);
      expect(show.stdout).toContain("usage:     1M in · 0 out · 1 request · $2.00\n");
    });
  });
}
