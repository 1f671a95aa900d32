/**
 * Issue 19 acceptance, process receipts (Hermes tools-runtime process registry, seed 000; T9 "Here"):
 * two servers on one PostgreSQL — a job started on one is read with `job_output` on the other after the
 * first is killed (SIGKILL); another session cannot read it, a fork of the session can; the receipt is
 * redacted whatever the live output was; retention by count; PID-safe adoption after a restart.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { Redactor } from "../../src/log/redact.js";
import type { Store } from "../../src/store/store.js";
import { FileObservations } from "../../src/tools/files/file-observations.js";
import { InMemoryJobStore } from "../../src/tools/jobs/job-store.js";
import { JobReceipts } from "../../src/tools/jobs/receipts.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { ServiceMap } from "../../src/tools/services.js";
import { createStandardRegistry } from "../../src/tools/standard.js";
import { LocalEnvironment, processStartTicks } from "../../src/tools/terminal/local.js";
import { setupTerminal } from "../../src/tools/terminal/setup.js";
import { type FreshDatabase, postgresHarness, sqliteHarness } from "../store/harness.js";
import { testDatabaseUrl } from "../support/database.js";
import { fixtureArgv } from "../support/fixtures.js";
import { call, tempDir } from "../tools/support.js";

const SECRET = "sk-live-secret-3c9a7e51f0";
const FIXTURE = fileURLToPath(new URL("./fixtures/job-server.ts", import.meta.url));

let db: FreshDatabase | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  child = undefined;
  await db?.dispose();
  db = undefined;
});

function receiptsFor(store: Store, host: string, keep = 50): JobReceipts {
  const redactor = Redactor.of([SECRET]);
  return new JobReceipts({
    receipts: store.processReceipts,
    redact: (text) => redactor.text(text),
    putBlob: (session, content) => store.putBlob(session, content, { kind: "job-output" }),
    host,
    backend: "local",
    retention: { maxAgeMs: 3_600_000, maxPerSession: keep },
    getSession: (id) => store.getSession(id),
    runningElsewhere: async (r) => (await store.getLease(`job:${r.sessionId}:${r.jobId}`)) !== undefined,
  });
}

/** A "server": the job tools over its own job store, reading receipts from `store`. */
function server(store: Store, host: string, keep = 50) {
  const receipts = receiptsFor(store, host, keep);
  const notices: string[] = [];
  const jobs = new InMemoryJobStore({ receipts, onNotice: (n) => notices.push(n.text) });
  const cwd = tempDir();
  const services = new ServiceMap({
    jobs,
    jobReceipts: receipts,
    fileObservations: new FileObservations(),
    terminal: new LocalEnvironment({ cwd, stripEnvKeys: [] }),
  });
  const pipeline = new ToolPipeline({ registry: createStandardRegistry(), hooks: new HookBus() });
  const run = async (sessionId: string, name: string, args: Record<string, unknown>) =>
    (
      await pipeline.run(call(name, args), {
        callId: "c",
        toolName: name,
        session: { sessionId, kind: "main", depth: 0 },
        cwd,
        workspace: cwd,
        sandbox: "danger-full-access",
        approval: "never",
        signal: new AbortController().signal,
        concludeTurn: () => {},
        services,
      })
    ).text;
  return { run, jobs, receipts, notices };
}

describe("process receipts (T9 jobs read on any server; Hermes tools runtime)", () => {
  it("two servers on one PostgreSQL: the job's output is read on the second after the first is killed; only its session (and a fork) can", async () => {
    db = await postgresHarness(testDatabaseUrl()).fresh();
    const store = await db.open();
    const session = await store.createSession({ title: "owner" });
    const stranger = await store.createSession({ title: "someone else" });
    const fork = await store.createSession({ parentId: session.id, kind: "fork" });

    child = spawn(
      process.execPath,
      [
        ...fixtureArgv(FIXTURE),
        JSON.stringify(db.target),
        session.id,
        `echo first line; echo the key is ${SECRET}; exit 3`,
        SECRET,
      ],
      { stdio: ["ignore", "pipe", "inherit"], cwd: tempDir() },
    );
    const said: Record<string, string>[] = [];
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      lines.on("line", (line) => {
        said.push(JSON.parse(line) as Record<string, string>);
        if (said.some((m) => m.notice) && said.some((m) => m.started)) resolve();
      });
      child!.once("exit", () => reject(new Error(`server 1 exited: ${JSON.stringify(said)}`)));
    });
    const jobId = said.find((m) => m.started)!.started!;
    expect(said.find((m) => m.notice)!.notice).toContain(`background job ${jobId}`);
    // The notice came after the receipt was written; now server 1 dies without any cleanup.
    const gone = new Promise((resolve) => child!.once("exit", resolve));
    child.kill("SIGKILL");
    await gone;

    const second = server(await db.open(), "server-2");
    const output = await second.run(session.id, "job_output", { job_id: jobId });
    expect(output).toMatch(
      /^first line\nthe key is \[REDACTED\]\n\[full output: spill:\/\/[^\]]+\]\n\[status: failed \(exit code 3\)\]$/,
    );
    expect(output).not.toContain(SECRET);
    // What was read stays read, on any server.
    expect(await second.run(session.id, "job_output", { job_id: jobId })).toMatch(/^\(no new output\)\n/);
    expect(await second.run(session.id, "job_list", {})).toBe(
      `${jobId} [bash] failed (exit code 3) — job on server 1`,
    );
    // Knowing the id is not enough.
    expect(await second.run(stranger.id, "job_output", { job_id: jobId })).toBe(
      `Error: unknown background job "${jobId}"`,
    );
    expect(await second.run(stranger.id, "job_list", {})).toBe("No background jobs");
    // A fork of the session continues it, so it may read its parent's receipt.
    expect(await second.run(fork.id, "job_output", { job_id: jobId })).toMatch(
      /\[status: failed \(exit code 3\)\]$/,
    );
    const receipt = await store.processReceipts.get(session.id, jobId);
    expect(receipt?.command).toBe("echo first line; echo the key is [REDACTED]; exit 3");
    expect(receipt?.host).toBe("server-1");
    const blob = await store.getBlob(receipt!.outputBlobId!);
    expect(blob?.content.toString("utf8")).not.toContain(SECRET);
  });

  it("writes the receipt before the notice and before a waiting job_output returns; retention keeps the newest per session (SQLite)", async () => {
    db = await sqliteHarness().fresh();
    const store = await db.open();
    const session = await store.createSession({});
    const one = server(store, "host-a", 2);
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const text = await one.run(session.id, "bash", {
        description: `job ${n}`,
        command: `echo job ${n}`,
        run_in_background: true,
      });
      const id = /job_[0-9a-f]+/.exec(text)![0];
      ids.push(id);
      expect(await one.run(session.id, "job_output", { job_id: id, wait: true })).toBe(
        `job ${n}\n[status: completed (exit code 0)]`,
      );
      // The wait returned only once the receipt was in the store.
      expect((await store.processReceipts.get(session.id, id))?.state).toBe("completed");
    }
    const kept = (await store.processReceipts.list(session.id)).map((r) => r.jobId);
    expect(kept).toEqual(ids.slice(1));
    // No notice for a job whose output a waiting job_output collected (T9).
    expect(one.notices).toEqual([]);
  });

  it("a job still running on another server reads as running while that server holds its lease, as lost once it does not", async () => {
    db = await sqliteHarness().fresh();
    const store = await db.open();
    const session = await store.createSession({});
    await store.processReceipts.checkpoint({
      sessionId: session.id,
      jobId: "job_far",
      kind: "bash",
      label: "far away",
      command: "sleep 600",
      backend: "local",
      host: "server-9",
      pid: 1234,
      startTicks: 1,
      startedAt: 1,
    });
    const here = server(store, "server-2");
    await store.acquireLease(`job:${session.id}:job_far`, "server-9", 60_000);
    expect(await here.run(session.id, "job_output", { job_id: "job_far" })).toBe(
      "(output not available here: the job runs on another server, server-9)\n[status: running]",
    );
    await store.releaseLease(`job:${session.id}:job_far`, "server-9");
    expect(await here.run(session.id, "job_list", {})).toBe(
      "job_far [bash] lost (the server that ran it (server-9) stopped; its outcome is unknown and its output is gone) — far away",
    );
  });

  it("after a restart, a checkpoint is adopted only when pid and start time both match; otherwise it is lost", async () => {
    db = await sqliteHarness().fresh();
    const store = await db.open();
    const session = await store.createSession({});
    const sleeper = spawn("sleep", ["60"], { stdio: "ignore" });
    const pid = sleeper.pid!;
    const ticks = processStartTicks(pid)!;
    const host = (await import("../../src/tools/jobs/receipts.js")).processHost();
    const base = {
      sessionId: session.id,
      kind: "bash",
      label: "l",
      command: "sleep 60",
      backend: "local",
      host,
    };
    await store.processReceipts.checkpoint({
      ...base,
      jobId: "job_alive",
      pid,
      startTicks: ticks,
      startedAt: 1,
    });
    // Same pid, another start time: the pid was reused by someone else's process.
    await store.processReceipts.checkpoint({
      ...base,
      jobId: "job_reused",
      pid,
      startTicks: ticks + 1,
      startedAt: 2,
    });
    await store.processReceipts.checkpoint({
      ...base,
      jobId: "job_gone",
      pid: 999_999_999,
      startTicks: 5,
      startedAt: 3,
    });
    // Not this agent's to judge: another session's job on this host, this session's job on another host.
    const other = await store.createSession({});
    await store.processReceipts.checkpoint({
      ...base,
      sessionId: other.id,
      jobId: "job_other_session",
      pid: 999_999_999,
      startTicks: 5,
      startedAt: 4,
    });
    await store.processReceipts.checkpoint({
      ...base,
      host: "another-host",
      jobId: "job_elsewhere",
      pid: 999_999_999,
      startTicks: 5,
      startedAt: 5,
    });

    const contexts: string[] = [];
    const agent = {
      sessionId: session.id,
      store,
      blobs: store,
      workspace: tempDir(),
      cwd: tempDir(),
      addContext: (c: { name: string }) => contexts.push(c.name),
    };
    const { builtinRegistry } = await import("../../src/tools/terminal/providers/index.js");
    const { DEFAULT_CONFIG } = await import("../../src/config/schema.js");
    const setup = await setupTerminal(agent, {
      config: DEFAULT_CONFIG,
      backends: builtinRegistry(),
      home: tempDir(),
      env: process.env,
      harnessEnvKeys: [],
      redactor: Redactor.none,
      onNotice: () => {},
    });
    expect(setup.jobs.get("job_alive")?.state).toBe("running");
    expect(setup.jobs.get("job_reused")).toBeUndefined();
    expect((await store.processReceipts.get(session.id, "job_reused"))?.state).toBe("lost");
    expect((await store.processReceipts.get(session.id, "job_gone"))?.state).toBe("lost");
    expect((await store.processReceipts.get(other.id, "job_other_session"))?.state).toBe("running");
    expect((await store.processReceipts.get(session.id, "job_elsewhere"))?.state).toBe("running");
    expect(setup.jobs.get("job_elsewhere")).toBeUndefined();
    expect(contexts).toContain("terminal-backend");
    // The adopted job can be stopped; it is still the process we recorded.
    const exited = new Promise((resolve) => sleeper.once("exit", resolve));
    await setup.jobs.kill("job_alive");
    await exited;
    await setup.jobs.settled("job_alive");
    expect((await store.processReceipts.get(session.id, "job_alive"))?.state).toBe("killed");
    await setup.terminal.cleanup();
  });
});
