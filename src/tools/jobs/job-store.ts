/**
 * Background jobs (T8, T9): commands that outlive their tool call.
 *
 * `JobStore` is the seam. `InMemoryJobStore` holds the live processes of this server; with `receipts`
 * (jobs/receipts.ts) every job leaves a checkpoint when it starts and one redacted receipt in the
 * store when it ends, which the job tools read when the job is not (or no longer) live here.
 *
 * Invariants:
 * - At most 10 running jobs per owner (the agent's session); the 11th is refused with T9's text.
 * - Output goes to a 256 KiB ring; `readNew` returns what arrived since the previous read.
 * - When a job finishes, its receipt is written first (with `receipts`), then `onNotice` receives T9's
 *   completion notice — unless the job was killed, or a `job_output` call was waiting on it and so
 *   collected the final status itself. A waiting `job_output` also returns only after the receipt.
 */
import { randomBytes } from "node:crypto";
import { StreamCapture } from "../bash/output-capture.js";
import type { ExitStatus, RunningCommand } from "../terminal/environment.js";
import { OutputRing } from "./output-ring.js";
import type { JobReceipts } from "./receipts.js";

export const JOB_LIMIT_PER_OWNER = 10;

/** `lost`: the backend lost the process (an SSH connection dropped), so its outcome is unknown. */
export type JobState = "running" | "completed" | "failed" | "signaled" | "killed" | "lost";

export type JobInfo = {
  id: string;
  owner: string;
  kind: string;
  label: string;
  state: JobState;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  startedAt: number;
  /** Why the outcome is unknown (`lost`). */
  note?: string;
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
    /** The command line, for the durable receipt; redacted there. */
    commandLine?: string;
  }): JobInfo;
  get(id: string): JobInfo | undefined;
  list(owner: string): JobInfo[];
  readNew(
    id: string,
    options?: { wait?: boolean; timeoutMs?: number; signal?: AbortSignal },
  ): Promise<JobRead>;
  kill(id: string): Promise<JobInfo>;
  killAll(): Promise<void>;
  /** Resolves once the job ended and its receipt (if any) is written. */
  settled?(id: string): Promise<void>;
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
    case "lost":
      return `lost (${info.note ?? "its outcome is unknown"})`;
  }
}

export function completionNotice(info: JobInfo): string {
  return `background job ${info.id} (${info.kind}: ${info.label}) finished [status: ${statusText(info)}]. Read its output with job_output.`;
}

type Job = {
  info: JobInfo;
  command: RunningCommand;
  commandLine: string;
  ring: OutputRing;
  /** Everything, up to the spill cap, for the receipt's blob (only with receipts). */
  full: StreamCapture | undefined;
  readOffset: number;
  waiters: number;
  collected: boolean;
  /** Resolves once the job ended and its receipt is written (before the notice). */
  settled: Promise<void>;
};

export class InMemoryJobStore implements JobStore {
  private readonly jobs = new Map<string, Job>();

  constructor(
    private readonly options: {
      onNotice?: (notice: JobNotice) => void;
      limitPerOwner?: number;
      ringBytes?: number;
      /** Durable receipts (jobs/receipts.ts); without them a job lives in this process only. */
      receipts?: JobReceipts;
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
    const receipts = this.options.receipts;
    const job: Job = {
      info,
      command: input.command,
      commandLine: input.commandLine ?? input.label,
      ring: new OutputRing(this.options.ringBytes),
      full: receipts ? new StreamCapture(1) : undefined,
      readOffset: 0,
      waiters: 0,
      collected: false,
      settled: Promise.resolve(),
    };
    const append = (chunk: Buffer) => {
      job.ring.append(chunk);
      job.full?.append(chunk);
    };
    if (input.initialOutput) append(input.initialOutput);
    input.command.onOutput((_stream, chunk) => append(chunk));
    this.jobs.set(info.id, job);
    // The owner is captured (and the checkpoint written) before the process can finish.
    const checkpoint = receipts
      ? receipts
          .started(info, job.commandLine, input.command.pid ?? null, input.command.startTicks ?? null)
          .catch(() => undefined)
      : Promise.resolve();
    job.settled = input.command.exited.then(async (status) => {
      await checkpoint;
      await this.finish(job, status);
    });
    return { ...info };
  }

  /** Adopts a process this server started before a restart (PID and start time matched; no output). */
  adoptRestored(input: { info: JobInfo; command: RunningCommand; commandLine: string }): void {
    const job: Job = {
      info: { ...input.info, state: "running" },
      command: input.command,
      commandLine: input.commandLine,
      ring: new OutputRing(this.options.ringBytes),
      full: this.options.receipts ? new StreamCapture(1) : undefined,
      readOffset: 0,
      waiters: 0,
      collected: false,
      settled: Promise.resolve(),
    };
    this.jobs.set(job.info.id, job);
    job.settled = input.command.exited.then((status) => this.finish(job, status));
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
        // Hermes: a waiting read returns once the receipt is written, like the notice.
        await waitFor(job.settled, options.timeoutMs ?? 30_000, options.signal);
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

  /** Resolves when the job has ended and its receipt is written (tests, shutdown). */
  settled(id: string): Promise<void> {
    return this.jobs.get(id)?.settled ?? Promise.resolve();
  }

  private async finish(job: Job, status: ExitStatus): Promise<void> {
    if (job.info.state === "running") {
      job.info.exitCode = status.exitCode;
      job.info.signal = status.signal;
      job.info.state = status.lost
        ? "lost"
        : status.exitCode === 0
          ? "completed"
          : status.exitCode === null
            ? "signaled"
            : "failed";
      if (status.lost) job.info.note = status.lost;
      // A job_output call waiting on it collects the final status itself (T9: no notice then).
      if (job.waiters > 0) job.collected = true;
    }
    const receipts = this.options.receipts;
    if (receipts) {
      const unread = job.ring.readFrom(job.readOffset).bytes;
      await receipts
        .finished({
          info: { ...job.info },
          commandLine: job.commandLine,
          pid: job.command.pid ?? null,
          startTicks: job.command.startTicks ?? null,
          unread,
          readBytes: job.readOffset,
          totalBytes: job.ring.total,
          full: Buffer.from(job.full?.fullText() ?? "", "utf8"),
          ...(job.info.note ? { note: job.info.note } : {}),
        })
        .catch(() => undefined); // a store that cannot take the receipt must not swallow the notice
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
