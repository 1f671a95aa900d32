/**
 * Process receipts for background jobs (Hermes tools-runtime process registry, seed 000
 * `tools-runtime.md`; T9 "Here": job state in the database).
 *
 * Invariants:
 * - The owner (the session that started the job) is captured when the job starts, before any output is
 *   read, and a checkpoint (host, pid, pid start time) is written then.
 * - When the job ends, ONE receipt is written (store/process-receipts.ts `complete`, a single statement)
 *   BEFORE the completion notice is released and before a waiting `job_output` returns: whoever hears of
 *   the end can read the receipt from any server.
 * - Everything in a receipt is redacted, whatever the live output showed (forced): the command, the label,
 *   the unread tail and the full output's blob.
 * - A receipt is read only on behalf of a session: the one that started the job, or a fork of it (a fork's
 *   parent chain; compaction continues the same session). Knowing a job id reads nothing.
 * - Retention: after each receipt the session's finished receipts are pruned by age and count (config
 *   `terminal.receipts`).
 * - After a restart, a checkpoint of this host is adopted only when the pid is alive AND its start time is
 *   the one recorded (a reused pid is someone else's process); otherwise its receipt says `lost`.
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { ProcessReceipt, ProcessReceiptStore } from "../../store/process-receipts.js";
import type { SessionRow } from "../../store/store.js";
import { processStartTicks } from "../terminal/local.js";
import type { JobInfo, JobState } from "./job-store.js";

export type ReceiptSettings = {
  receipts: ProcessReceiptStore;
  /** Redacts every text a receipt keeps (log/redact.ts). */
  redact: (text: string) => string;
  /** Stores the full output (the store's blobs); its id goes in the receipt. */
  putBlob?: (sessionId: string, content: string) => Promise<{ id: string }>;
  /** This server's identity for checkpoints (`processHost()`). */
  host: string;
  backend: string;
  retention: { maxAgeMs: number; maxPerSession: number };
  /** The session row, for the fork chain of `mayRead`. */
  getSession: (id: string) => Promise<Pick<SessionRow, "id" | "parentId" | "kind"> | undefined>;
  /**
   * Whether a checkpoint of another host still runs there (`bdsh serve` holds the job's lease while it
   * runs, server/lost-jobs.ts). Without it a running checkpoint is taken at its word.
   */
  runningElsewhere?: (receipt: ProcessReceipt) => Promise<boolean>;
};

/** This host in this boot: a pid means nothing on another host or after a reboot. */
let host: string | undefined;

/** This machine's name and boot (fixed for the process's life, so read once). */
export function processHost(): string {
  host ??= readProcessHost();
  return host;
}

function readProcessHost(): string {
  let boot = "";
  try {
    boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim().slice(0, 8);
  } catch {
    // No procfs: the host name alone.
  }
  return boot ? `${hostname()}#${boot}` : hostname();
}

/** Whether `reader` may read a receipt of `owner`: the same session, or a fork descending from it. */
export async function mayRead(
  getSession: ReceiptSettings["getSession"],
  reader: string,
  owner: string,
): Promise<boolean> {
  let current = reader;
  for (let depth = 0; depth < 64; depth++) {
    if (current === owner) return true;
    const row = await getSession(current);
    if (row?.kind !== "fork" || !row.parentId) return false;
    current = row.parentId;
  }
  return false;
}

export type FinishedJob = {
  info: JobInfo;
  commandLine: string;
  startTicks: number | null;
  pid: number | null;
  /** Raw output not yet read by the model, and how many bytes were read. */
  unread: Buffer;
  readBytes: number;
  totalBytes: number;
  full: Buffer;
  note?: string;
};

const receiptState = (state: JobState): ProcessReceipt["state"] => state;

export class JobReceipts {
  constructor(readonly settings: ReceiptSettings) {}

  async started(
    info: JobInfo,
    commandLine: string,
    pid: number | null,
    startTicks: number | null,
  ): Promise<void> {
    const { redact } = this.settings;
    await this.settings.receipts.checkpoint({
      sessionId: info.owner,
      jobId: info.id,
      kind: info.kind,
      label: redact(info.label),
      command: redact(commandLine),
      backend: this.settings.backend,
      host: this.settings.host,
      pid,
      startTicks,
      startedAt: info.startedAt,
    });
  }

  /** Writes the receipt (then prunes); resolves when it is in the store. */
  async finished(job: FinishedJob): Promise<void> {
    const { redact } = this.settings;
    let blobId: string | null = null;
    if (this.settings.putBlob && job.full.length > 0) {
      blobId =
        (
          await this.settings
            .putBlob(job.info.owner, redact(job.full.toString("utf8")))
            .catch(() => undefined)
        )?.id ?? null;
    }
    await this.settings.receipts.complete({
      sessionId: job.info.owner,
      jobId: job.info.id,
      kind: job.info.kind,
      label: redact(job.info.label),
      command: redact(job.commandLine),
      backend: this.settings.backend,
      host: this.settings.host,
      pid: job.pid,
      startTicks: job.startTicks,
      startedAt: job.info.startedAt,
      state: receiptState(job.info.state),
      exitCode: job.info.exitCode,
      signal: job.info.signal,
      finishedAt: Date.now(),
      outputTail: redact(job.unread.toString("utf8")),
      outputBytes: job.totalBytes,
      readBytes: job.readBytes,
      outputBlobId: blobId,
      note: job.note ?? null,
    });
    const { maxAgeMs, maxPerSession } = this.settings.retention;
    await this.settings.receipts
      .prune({ olderThan: Date.now() - maxAgeMs, keepPerSession: maxPerSession, sessionId: job.info.owner })
      .catch(() => 0);
  }

  /** The receipt of `jobId` of `owner`, if `reader` may read it. */
  async read(reader: string, owner: string, jobId: string): Promise<ProcessReceipt | undefined> {
    if (!(await mayRead(this.settings.getSession, reader, owner))) return undefined;
    return this.settings.receipts.get(owner, jobId);
  }

  /**
   * A checkpoint that says `running` on another host whose job is no longer alive there reads as lost
   * (nothing is written: the host may yet write its receipt).
   */
  async current(receipt: ProcessReceipt): Promise<ProcessReceipt> {
    if (receipt.state !== "running" || receipt.host === this.settings.host || !this.settings.runningElsewhere)
      return receipt;
    if (await this.settings.runningElsewhere(receipt).catch(() => true)) return receipt;
    return {
      ...receipt,
      state: "lost",
      note: `the server that ran it (${receipt.host}) stopped; its outcome is unknown and its output is gone`,
    };
  }

  /** The receipt of `jobId` started by `reader` or by a session it was forked from. */
  async find(reader: string, jobId: string): Promise<ProcessReceipt | undefined> {
    let current: string | undefined = reader;
    for (let depth = 0; current && depth < 64; depth++) {
      const receipt = await this.settings.receipts.get(current, jobId);
      if (receipt) return this.current(receipt);
      const row = await this.settings.getSession(current);
      current = row?.kind === "fork" ? (row.parentId ?? undefined) : undefined;
    }
    return undefined;
  }

  /** Checkpoints of this host for `sessionId`: alive with the same start time (adopt), or lost. */
  async checkpointsAfterRestart(
    sessionId: string,
  ): Promise<{ adopt: ProcessReceipt[]; lost: ProcessReceipt[] }> {
    const running = await this.settings.receipts.runningOn(this.settings.host, sessionId);
    const adopt: ProcessReceipt[] = [];
    const lost: ProcessReceipt[] = [];
    for (const row of running) {
      const same =
        row.pid !== null && row.startTicks !== null && processStartTicks(row.pid) === row.startTicks;
      (same ? adopt : lost).push(row);
    }
    return { adopt, lost };
  }

  /** Marks a checkpoint whose process is gone (or is another process now) as lost. */
  async markLost(row: ProcessReceipt, note: string): Promise<void> {
    await this.settings.receipts.complete({
      ...row,
      state: "lost",
      exitCode: null,
      signal: null,
      finishedAt: Date.now(),
      outputTail: "",
      outputBytes: 0,
      readBytes: 0,
      outputBlobId: null,
      note,
    });
  }
}

/** A receipt as the job tools show it (T9 status vocabulary). */
export function receiptInfo(receipt: ProcessReceipt): JobInfo & { lost?: string } {
  const state: JobState = receipt.state === "lost" ? "failed" : receipt.state;
  return {
    id: receipt.jobId,
    owner: receipt.sessionId,
    kind: receipt.kind,
    label: receipt.label,
    state,
    exitCode: receipt.exitCode,
    signal: receipt.signal as NodeJS.Signals | null,
    startedAt: receipt.startedAt,
    ...(receipt.state === "lost" ? { lost: receipt.note ?? "its outcome is unknown" } : {}),
  };
}

declare module "../types.js" {
  interface ToolServiceMap {
    /** The receipts of finished jobs, readable from any server. */
    jobReceipts: JobReceipts;
  }
}
