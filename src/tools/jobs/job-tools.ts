/**
 * `job_output`, `job_list`, `job_kill` (T9).
 *
 * Model-visible: `(no new output)`, `[status: <status>]`, `<id> [<kind>] <status> — <label>`,
 * `No background jobs`, `killed background job <id>`, `Error: unknown background job "<id>"`.
 * Jobs are owned by the session; another session's job is unknown here.
 */
import type { ToolDefinition, ToolExec, ToolOutput } from "../types.js";
import { type JobStore, statusText } from "./job-store.js";

export const JOB_OUTPUT_DEFAULT_TIMEOUT_MS = 30_000;
export const JOB_OUTPUT_MAX_TIMEOUT_MS = 600_000;

function ownedJob(exec: ToolExec, id: string): JobStore {
  const jobs = exec.services.require("jobs");
  const info = jobs.get(id);
  if (!info || info.owner !== exec.session.sessionId) throw new Error(`unknown background job "${id}"`);
  return jobs;
}

export const jobOutputTool: ToolDefinition<{ job_id: string; wait?: boolean; timeout_ms?: number }> = {
  name: "job_output",
  toolset: "jobs",
  description:
    "Read the output a background job produced since your last read, followed by its status. Set wait to true to block until the job finishes or timeout_ms passes.",
  parameters: {
    type: "object",
    properties: {
      job_id: { type: "string", description: "The id returned when the job started." },
      wait: {
        type: "boolean",
        description: "Wait for the job to finish (up to timeout_ms). Defaults to false.",
      },
      timeout_ms: {
        type: "integer",
        minimum: 1,
        maximum: JOB_OUTPUT_MAX_TIMEOUT_MS,
        description: "How long to wait when wait is true. Defaults to 30000; at most 600000.",
      },
    },
    required: ["job_id"],
    additionalProperties: false,
  },
  isAvailable: ({ services }) => services.get("jobs") !== undefined,
  async execute(args, exec): Promise<ToolOutput> {
    const jobs = ownedJob(exec, args.job_id);
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
    return { text: parts.join("\n") };
  },
};

export const jobListTool: ToolDefinition<Record<string, never>> = {
  name: "job_list",
  toolset: "jobs",
  description: "List this agent's background jobs with their status.",
  readOnly: true,
  parameters: { type: "object", properties: {}, additionalProperties: false },
  isAvailable: ({ services }) => services.get("jobs") !== undefined,
  async execute(_args, exec): Promise<ToolOutput> {
    const jobs = exec.services.require("jobs").list(exec.session.sessionId);
    if (jobs.length === 0) return { text: "No background jobs" };
    return {
      text: jobs.map((job) => `${job.id} [${job.kind}] ${statusText(job)} — ${job.label}`).join("\n"),
    };
  },
};

export const jobKillTool: ToolDefinition<{ job_id: string }> = {
  name: "job_kill",
  toolset: "jobs",
  description: "Stop a background job (SIGTERM, then SIGKILL after a grace period).",
  parameters: {
    type: "object",
    properties: { job_id: { type: "string", description: "The id of the job to stop." } },
    required: ["job_id"],
    additionalProperties: false,
  },
  isAvailable: ({ services }) => services.get("jobs") !== undefined,
  async execute(args, exec): Promise<ToolOutput> {
    const info = await ownedJob(exec, args.job_id).kill(args.job_id);
    if (info.state !== "killed")
      return { text: `background job ${info.id} had already finished [status: ${statusText(info)}]` };
    return { text: `killed background job ${info.id}` };
  },
};
