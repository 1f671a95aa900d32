/**
 * C9: two real processes compact the same session at the same moment. The store-level lock lets exactly
 * one through; the other reports busy, and the log holds one compaction transaction.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { COMPACTION_BUSY } from "../../src/context/compaction/texts.js";
import { findPairingError } from "../../src/log/pairing.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import type { FakeReply } from "../../testing/fake-provider/index.js";
import { loopFixture, personaPlugin } from "../loop/harness.js";
import { testDatabaseUrl } from "../support/database.js";
import { fixtureArgv } from "../support/fixtures.js";
import { isSummaryRequest } from "./long-session.js";

const SCRIPT = fileURLToPath(new URL("./fixtures/compact-process.ts", import.meta.url));

function compactIn(env: NodeJS.ProcessEnv): Promise<{ kind: string; message: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...fixtureArgv(SCRIPT)], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      if (code !== 0 || !line) reject(new Error(`compact process failed (${code}): ${err}`));
      else resolve(JSON.parse(line.slice(7)) as { kind: string; message: string });
    });
  });
}

for (const storeKind of ["sqlite", "postgres"] as const) {
  describe(`C9 two processes racing to compact on ${storeKind}`, () => {
    it("one compacts, the other is busy, and the log holds one transaction", async () => {
      const databaseUrl = storeKind === "postgres" ? testDatabaseUrl() : undefined;
      const slowSummary: FakeReply = {
        text: "## Primary Request and Intent\n- go",
        chunkSize: 2,
        frameDelayMs: 40,
      };
      let work = 0;
      const f = await loopFixture({
        script: (request) => {
          if (isSummaryRequest(request)) return slowSummary;
          work++;
          return work === 1 ? { toolCalls: [{ id: "a", name: "work", arguments: {} }] } : { text: "answer" };
        },
        tools: { work: { run: () => ({ text: "result ".repeat(200) }) } },
        plugins: [personaPlugin],
        ...(databaseUrl ? { databaseUrl } : {}),
      });
      try {
        await f.agent.followup("go");
        await f.agent.whenIdle();
        const home = (f.agent as unknown as { options: { workspace: string } }).options.workspace;
        const env = {
          STORE_HOME: home,
          SESSION_ID: f.sessionId,
          FAKE_URL: f.fake.url,
          ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
        };
        const outcomes = await Promise.all([compactIn(env), compactIn(env)]);
        const kinds = outcomes.map((o) => o.kind).sort();
        expect(kinds).toEqual(["busy", "compacted"]);
        expect(outcomes.find((o) => o.kind === "busy")?.message).toBe(COMPACTION_BUSY);
        const events = await f.events();
        expect(events.filter((e) => e.type === "compaction/start")).toHaveLength(1);
        expect(events.filter((e) => e.type === "compaction/end").map((e) => e.data)).toEqual([
          { ok: true, replaced: 3 },
        ]);
        expect(f.fake.requests.filter(isSummaryRequest)).toHaveLength(1);
        expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
      } finally {
        await f.close();
      }
    });
  });
}
