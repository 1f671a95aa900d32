import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { InMemoryJobStore } from "../../src/tools/jobs/job-store.js";
import { OutputRing } from "../../src/tools/jobs/output-ring.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { createStandardRegistry } from "../../src/tools/standard.js";
import { call, makeExec, tempDir } from "./support.js";

function setup() {
  const ctx = makeExec({ workspace: tempDir(), sandbox: "danger-full-access" });
  const pipeline = new ToolPipeline({ registry: createStandardRegistry(), hooks: new HookBus() });
  const run = async (name: string, args: Record<string, unknown>) =>
    (await pipeline.run(call(name, args), ctx.exec)).text;
  const start = async (command: string, description = "job") => {
    const text = await run("bash", { description, command, run_in_background: true });
    const id = /^started background job (job_[0-9a-f]+)$/.exec(text)?.[1];
    if (!id) throw new Error(text);
    return id;
  };
  return { ctx, run, start };
}

describe("T9 background jobs", () => {
  it("returns new output since the last read, then (no new output), with the status", async () => {
    const { run, start } = setup();
    const id = await start("echo one; echo two");
    expect(await run("job_output", { job_id: id, wait: true })).toBe(
      "one\ntwo\n[status: completed (exit code 0)]",
    );
    expect(await run("job_output", { job_id: id })).toBe(
      "(no new output)\n[status: completed (exit code 0)]",
    );
  });

  it("lists jobs as <id> [<kind>] <status> — <label>", async () => {
    const { run, start } = setup();
    expect(await run("job_list", {})).toBe("No background jobs");
    const id = await start("sleep 30", "wait a while");
    expect(await run("job_list", {})).toBe(`${id} [bash] running — wait a while`);
    expect(await run("job_kill", { job_id: id })).toBe(`killed background job ${id}`);
    expect(await run("job_list", {})).toBe(`${id} [bash] killed — wait a while`);
  });

  it("sends the completion notice once, and none for a killed or collected job", async () => {
    const { ctx, run, start } = setup();
    const finished = await start("exit 2", "fails");
    // The collected job ends only once job_output is waiting on it: had it ended first, its notice would
    // rightly go out (nobody had read its status yet).
    const go = join(ctx.exec.workspace, "go");
    const collected = await start(`while [ ! -e '${go}' ]; do sleep 0.01; done`, "collected");
    const killed = await start("sleep 30", "killed");
    const readNew = ctx.jobs.readNew.bind(ctx.jobs);
    vi.spyOn(ctx.jobs, "readNew").mockImplementation((...args) => {
      const read = readNew(...args); // registers the waiter before its first await
      writeFileSync(go, "");
      return read;
    });
    await run("job_output", { job_id: collected, wait: true });
    await run("job_kill", { job_id: killed });
    await new Promise<void>((resolve) => {
      const check = () => (ctx.notices.length > 0 ? resolve() : setImmediate(check));
      check();
    });
    expect(ctx.notices).toEqual([
      {
        owner: "session-1",
        jobId: finished,
        text: `background job ${finished} (bash: fails) finished [status: failed (exit code 2)]. Read its output with job_output.`,
      },
    ]);
  });

  it("limits running jobs to 10 per owner", async () => {
    const { ctx, run, start } = setup();
    for (let i = 0; i < 10; i += 1) await start("sleep 30");
    expect(await run("bash", { description: "x", command: "sleep 30", run_in_background: true })).toBe(
      "Error: background job limit reached for this owner (limit: 10); use job_kill to stop a job you no longer need, then retry",
    );
    await ctx.jobs.killAll();
  });

  it("answers an unknown job id", async () => {
    const { run } = setup();
    expect(await run("job_output", { job_id: "job_nope" })).toBe('Error: unknown background job "job_nope"');
  });

  it("keeps the last 256 KiB and says how much was omitted", () => {
    const ring = new OutputRing(10);
    ring.append(Buffer.from("0123456789abcdef"));
    expect(ring.readFrom(0)).toEqual({ bytes: Buffer.from("6789abcdef"), omitted: 6 });
    expect(new InMemoryJobStore().list("x")).toEqual([]);
  });
});
