/**
 * Background jobs (T8, T9): commands that outlive their tool call.
 *
 * `JobStore` is the seam: `InMemoryJobStore` now; the loop adds store-backed rows and inbox delivery
 * behind the same interface (T9 "Here": job state and notices in the database).
 *
 * Invariants:
 * - At most 10 running jobs per owner (the agent's session); the 11th is refused with T9's text.
 * - Output goes to a 256 KiB ring; `readNew` returns what arrived since the previous read.
 * - When a job finishes, `onNotice` receives T9's completion notice — unless the job was killed, or a
 *   `job_output` call was waiting on it and so collected the final status itself.
 */
import { randomBytes } from "node:crypto";
import type { ExitStatus, RunningCommand } from "../terminal/environment.js";
import { OutputRing } from "./output-ring.js";

export const JOB_LIMIT_PER_OWNER = 10;

export type JobState = "running" | "completed" | "failed" | "signaled" | "killed";

export type JobInfo = {
  id: string;
  owner: string;
  kind: string;
  label: string;
  state: JobState;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  startedAt: number;
};

export type JobNotice = { owner: string; jobId: string; text: string };

export type JobRead = { output: string; omittedBytes: number; info: JobInfo };

export class JobLimitError extends Error {
  constructor(readonly limit: number) {
    super(
      `background job limit reached for this owner (limit: ${limit}); use job_kill to stop a job you no longer need, then retry`,
    );
    this.name = "JobLimitError";
  }
}

export interface JobStore {
  adopt(input: {
    owner: string;
    kind: string;
    label: string;
    command: RunningCommand;
    /** Output the caller already captured before handing the command over (T8 timeout → job). */
    initialOutput?: Buffer;
  }): JobInfo;
  get(id: string): JobInfo | undefined;
  list(owner: string): JobInfo[];
  readNew(
    id: string,
    options?: { wait?: boolean; timeoutMs?: number; signal?: AbortSignal },
  ): Promise<JobRead>;
  kill(id: string): Promise<JobInfo>;
  killAll(): Promise<void>;
}

declare module "../types.js" {
  interface ToolServiceMap {
    jobs: JobStore;
  }
}

export function statusText(info: JobInfo): string {
  switch (info.state) {
    case "running":
      return "running";
    case "completed":
      return "completed (exit code 0)";
    case "failed":
      return `failed (exit code ${info.exitCode})`;
    case "signaled":
      return `terminated by signal ${info.signal}`;
    case "killed":
      return "killed";
  }
}

export function completionNotice(info: JobInfo): string {
  return `background job ${info.id} (${info.kind}: ${info.label}) finished [status: ${statusText(info)}]. Read its output with job_output.`;
}

type Job = {
  info: JobInfo;
  command: RunningCommand;
  ring: OutputRing;
  readOffset: number;
  waiters: number;
  collected: boolean;
};

export class InMemoryJobStore implements JobStore {
  private readonly jobs = new Map<string, Job>();

  constructor(
    private readonly options: {
      onNotice?: (notice: JobNotice) => void;
      limitPerOwner?: number;
      ringBytes?: number;
    } = {},
  ) {}

  adopt(input: Parameters<JobStore["adopt"]>[0]): JobInfo {
    const limit = this.options.limitPerOwner ?? JOB_LIMIT_PER_OWNER;
    const running = this.list(input.owner).filter((info) => info.state === "running").length;
    if (running >= limit) throw new JobLimitError(limit);
    const info: JobInfo = {
      id: `job_${randomBytes(4).toString("hex")}`,
      owner: input.owner,
      kind: input.kind,
      label: input.label,
      state: "running",
      exitCode: null,
      signal: null,
      startedAt: Date.now(),
    };
    const job: Job = {
      info,
      command: input.command,
      ring: new OutputRing(this.options.ringBytes),
      readOffset: 0,
      waiters: 0,
      collected: false,
    };
    if (input.initialOutput) job.ring.append(input.initialOutput);
    input.command.onOutput((_stream, chunk) => job.ring.append(chunk));
    this.jobs.set(info.id, job);
    void input.command.exited.then((status) => this.finish(job, status));
    return { ...info };
  }

  get(id: string): JobInfo | undefined {
    const job = this.jobs.get(id);
    return job ? { ...job.info } : undefined;
  }

  list(owner: string): JobInfo[] {
    return [...this.jobs.values()].filter((job) => job.info.owner === owner).map((job) => ({ ...job.info }));
  }

  async readNew(
    id: string,
    options: { wait?: boolean; timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<JobRead> {
    const job = this.jobs.get(id);
    if (!job) throw new Error(`unknown background job "${id}"`);
    if (options.wait && job.info.state === "running") {
      job.waiters += 1;
      try {
        await waitFor(job.command.exited, options.timeoutMs ?? 30_000, options.signal);
      } finally {
        job.waiters -= 1;
      }
    }
    const { bytes, omitted } = job.ring.readFrom(job.readOffset);
    job.readOffset = job.ring.total;
    if (job.info.state !== "running") job.collected = true;
    return { output: bytes.toString("utf8"), omittedBytes: omitted, info: { ...job.info } };
  }

  async kill(id: string): Promise<JobInfo> {
    const job = this.jobs.get(id);
    if (!job) throw new Error(`unknown background job "${id}"`);
    if (job.info.state === "running") {
      job.info.state = "killed";
      await job.command.kill();
    }
    return { ...job.info };
  }

  async killAll(): Promise<void> {
    await Promise.all([...this.jobs.values()].map((job) => this.kill(job.info.id)));
  }

  private finish(job: Job, status: ExitStatus): void {
    if (job.info.state === "running") {
      job.info.exitCode = status.exitCode;
      job.info.signal = status.signal;
      job.info.state = status.exitCode === 0 ? "completed" : status.exitCode === null ? "signaled" : "failed";
      // A job_output call waiting on it collects the final status itself (T9: no notice then).
      if (job.waiters > 0) job.collected = true;
    }
    if (job.info.state === "killed" || job.collected) return;
    this.options.onNotice?.({ owner: job.info.owner, jobId: job.info.id, text: completionNotice(job.info) });
  }
}

function waitFor(
  promise: Promise<unknown>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    signal?.addEventListener("abort", done, { once: true });
    void promise.then(done);
  });
}
