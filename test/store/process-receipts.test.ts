/**
 * `runningOn`, the read every agent makes when it opens (adoption after a restart, T9): asked for many
 * sessions at once, on PostgreSQL it goes out as one statement (statement-combiner.ts), and each caller still
 * gets exactly its own session's checkpoints on its own host, still running — never another session's or
 * another host's.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProcessCheckpoint } from "../../src/store/process-receipts.js";
import type { Store } from "../../src/store/store.js";
import { bothStores, type FreshDatabase } from "./harness.js";
import { recordStatements } from "./recorders.js";

describe.each(bothStores())("running checkpoints read together, on %s", (storeName, harness) => {
  let db: FreshDatabase;
  let store: Store;

  beforeEach(async () => {
    db = await harness.fresh();
    store = await db.open();
  });

  afterEach(async () => {
    await db.dispose();
  });

  const checkpoint = (sessionId: string, jobId: string, host: string): ProcessCheckpoint => ({
    sessionId,
    jobId,
    kind: "bash",
    label: jobId,
    command: `sleep 100 # ${jobId}`,
    backend: "local",
    host,
    pid: 4242,
    startTicks: 7,
    startedAt: Date.now(),
  });

  it("answers each session its own running checkpoints on its own host, in one statement", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await store.createSession()).id);
    const receipts = store.processReceipts;
    // Session 0: two running here and one elsewhere; 1: one here that finished; 2: one here; 3–5: none here.
    await receipts.checkpoint(checkpoint(ids[0]!, "a", "here"));
    await receipts.checkpoint(checkpoint(ids[0]!, "b", "here"));
    await receipts.checkpoint(checkpoint(ids[0]!, "c", "there"));
    await receipts.checkpoint(checkpoint(ids[1]!, "d", "here"));
    await receipts.complete({
      ...checkpoint(ids[1]!, "d", "here"),
      state: "completed",
      exitCode: 0,
      signal: null,
      finishedAt: Date.now(),
      outputTail: "",
      outputBytes: 0,
      readBytes: 0,
      outputBlobId: null,
      note: null,
    });
    await receipts.checkpoint(checkpoint(ids[2]!, "e", "here"));
    await receipts.checkpoint(checkpoint(ids[3]!, "f", "there"));

    const statements: string[] = [];
    if (storeName === "PostgreSQL") recordStatements(store, "bdsh_receipts", statements); // the receipts share the store's pool
    const running = await Promise.all(ids.map((id) => receipts.runningOn("here", id)));
    expect(running.map((rows) => rows.map((r) => `${ids.indexOf(r.sessionId)}:${r.jobId}`).sort())).toEqual([
      ["0:a", "0:b"],
      [],
      ["2:e"],
      [],
      [],
      [],
    ]);
    for (const rows of running)
      for (const row of rows) expect([row.host, row.state]).toEqual(["here", "running"]);
    if (storeName === "PostgreSQL") expect(statements).toEqual(["bdsh_receipts_running"]);
    expect((await receipts.runningOn("there", ids[0]!)).map((r) => r.jobId)).toEqual(["c"]);
  });
});
