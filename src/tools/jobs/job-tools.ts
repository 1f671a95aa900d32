/**
 * `job_output`, `job_list`, `job_kill` (T9).
 *
 * Model-visible: `(no new output)`, `[status: <status>]`, `<id> [<kind>] <status> — <label>`,
 * `No background jobs`, `killed background job <id>`, `Error: unknown background job "<id>"`.
 * Jobs are owned by the session; another session's job is unknown here. A job that is not live
 * on this server is read from its receipt (jobs/receipts.ts): the same session or a fork of it only.
 * Details (`job`): job_output and job_kill name the job and its state after the call; job_list has none.
 */

import type { ToolDetails } from "../../log/tool-details.js";
import type { ProcessReceipt } from "../../store/process-receipts.js";
import { type Static, Type, toolParameters } from "../schema.js";
import { spillLocator } from "../spill/blob-store.js";
import type { ToolDefinition, ToolExec, ToolOutput } from "../types.js";
import { type JobInfo, type JobStore, statusText } from "./job-store.js";
import { receiptInfo } from "./receipts.js";

export const JOB_OUTPUT_DEFAULT_TIMEOUT_MS = 30_000;
export const JOB_OUTPUT_MAX_TIMEOUT_MS = 600_000;

function ownedJob(exec: ToolExec, id: string): JobStore | undefined {
  const jobs = exec.services.require("jobs");
  const info = jobs.get(id);
  return info && info.owner === exec.session.sessionId ? jobs : undefined;
}

/** The job's receipt when it is not live here (another server, or before a restart). */
async function receiptOf(exec: ToolExec, id: string): Promise<ProcessReceipt | undefined> {
  return exec.services.get("jobReceipts")?.find(exec.session.sessionId, id);
}

const unknownJob = (id: string) => new Error(`unknown background job "${id}"`);

/** The `job` details of a call about one job: its state after the call. */
function jobDetails(info: Pick<JobInfo, "id" | "state" | "exitCode"> & { lost?: string }): ToolDetails {
  return {
    kind: "job",
    jobId: info.id,
    status: info.lost ? "lost" : info.state,
    ...(typeof info.exitCode === "number" ? { exitCode: info.exitCode } : {}),
  };
}

const receiptDetails = (receipt: ProcessReceipt): ToolDetails =>
  receipt.state === "running"
    ? { kind: "job", jobId: receipt.jobId, status: "running" }
    : jobDetails(receiptInfo(receipt));

function receiptStatus(receipt: ProcessReceipt): string {
  const info = receiptInfo(receipt);
  return info.lost ? `lost (${info.lost})` : receipt.state === "running" ? "running" : statusText(info);
}

async function readReceipt(exec: ToolExec, receipt: ProcessReceipt): Promise<ToolOutput> {
  const parts: string[] = [];
  if (receipt.state === "running") {
    parts.push(`(output not available here: the job runs on another server, ${receipt.host})`);
  } else if (receipt.readBytes >= receipt.outputBytes || receipt.outputTail === "") {
    parts.push("(no new output)");
  } else {
    parts.push(receipt.outputTail.replace(/\n$/, ""));
    await exec.services
      .get("jobReceipts")
      ?.settings.receipts.markRead(receipt.sessionId, receipt.jobId, receipt.outputBytes)
      .catch(() => undefined);
  }
  if (receipt.outputBlobId) parts.push(`[full output: ${spillLocator(receipt.outputBlobId)}]`);
  parts.push(`[status: ${receiptStatus(receipt)}]`);
  return { text: parts.join("\n"), details: receiptDetails(receipt) };
}

const JobOutputSchema = Type.Object(
  {
    job_id: Type.String({ description: "The id returned when the job started." }),
    wait: Type.Optional(
      Type.Boolean({ description: "Wait for the job to finish (up to timeout_ms). Defaults to false." }),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: JOB_OUTPUT_MAX_TIMEOUT_MS,
        description: "How long to wait when wait is true. Defaults to 30000; at most 600000.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const jobOutputTool: ToolDefinition<Static<typeof JobOutputSchema>> = {
  name: "job_output",
  toolset: "jobs",
  description:
    "Read the output a background job produced since your last read, followed by its status. Set wait to true to block until the job finishes or timeout_ms passes.",
  parameters: toolParameters(JobOutputSchema),
  isAvailable: ({ services }) => services.get("jobs") !== undefined,
  async execute(args, exec): Promise<ToolOutput> {
    const jobs = ownedJob(exec, args.job_id);
    if (!jobs) {
      const receipt = await receiptOf(exec, args.job_id);
      if (!receipt) throw unknownJob(args.job_id);
      return readReceipt(exec, receipt);
    }
    const read = await jobs.readNew(args.job_id, {
      wait: args.wait ?? false,
      timeoutMs: Math.min(args.timeout_ms ?? JOB_OUTPUT_DEFAULT_TIMEOUT_MS, JOB_OUTPUT_MAX_TIMEOUT_MS),
      signal: exec.signal,
    });
    const parts: string[] = [];
    if (read.omittedBytes > 0)
      parts.push(`(Omitted ${read.omittedBytes} bytes. Older output no longer kept.)`);
    parts.push(read.output === "" ? "(no new output)" : read.output.replace(/\n$/, ""));
    parts.push(`[status: ${statusText(read.info)}]`);
    if (read.info.state !== "running") {
      // The receipt remembers what was read, so another server does not show it again.
      const receipts = exec.services.get("jobReceipts");
      if (receipts) {
        await jobs.settled?.(args.job_id);
        await receipts.settings.receipts
          .markRead(read.info.owner, read.info.id, Number.MAX_SAFE_INTEGER)
          .catch(() => undefined);
      }
    }
    return { text: parts.join("\n"), details: jobDetails(read.info) };
  },
};

const JobListSchema = Type.Object({}, { additionalProperties: false });

export const jobListTool: ToolDefinition<Static<typeof JobListSchema>> = {
  name: "job_list",
  toolset: "jobs",
  description: "List this agent's background jobs with their status.",
  readOnly: true,
  parameters: toolParameters(JobListSchema),
  isAvailable: ({ services }) => services.get("jobs") !== undefined,
  async execute(_args, exec): Promise<ToolOutput> {
    const live = exec.services.require("jobs").list(exec.session.sessionId);
    const lines = live.map((job) => `${job.id} [${job.kind}] ${statusText(job)} — ${job.label}`);
    // Jobs of this session that another server (or this one before a restart) ran.
    const receipts = exec.services.get("jobReceipts");
    if (receipts) {
      const known = new Set(live.map((job) => job.id));
      for (const stored of await receipts.settings.receipts.list(exec.session.sessionId).catch(() => [])) {
        if (known.has(stored.jobId)) continue;
        const receipt = await receipts.current(stored);
        lines.push(`${receipt.jobId} [${receipt.kind}] ${receiptStatus(receipt)} — ${receipt.label}`);
      }
    }
    if (lines.length === 0) return { text: "No background jobs" };
    return { text: lines.join("\n") };
  },
};

const JobKillSchema = Type.Object(
  {
    job_id: Type.String({ description: "The id of the job to stop." }),
  },
  { additionalProperties: false },
);

export const jobKillTool: ToolDefinition<Static<typeof JobKillSchema>> = {
  name: "job_kill",
  toolset: "jobs",
  description: "Stop a background job (SIGTERM, then SIGKILL after a grace period).",
  parameters: toolParameters(JobKillSchema),
  isAvailable: ({ services }) => services.get("jobs") !== undefined,
  async execute(args, exec): Promise<ToolOutput> {
    const jobs = ownedJob(exec, args.job_id);
    if (!jobs) {
      const receipt = await receiptOf(exec, args.job_id);
      if (!receipt) throw unknownJob(args.job_id);
      if (receipt.state === "running")
        throw new Error(
          `background job ${receipt.jobId} runs on another server (${receipt.host}); it can only be stopped there`,
        );
      return {
        text: `background job ${receipt.jobId} had already finished [status: ${receiptStatus(receipt)}]`,
        details: receiptDetails(receipt),
      };
    }
    const info = await jobs.kill(args.job_id);
    if (info.state !== "killed")
      return {
        text: `background job ${info.id} had already finished [status: ${statusText(info)}]`,
        details: jobDetails(info),
      };
    return { text: `killed background job ${info.id}`, details: jobDetails(info) };
  },
};
