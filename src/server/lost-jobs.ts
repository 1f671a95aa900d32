/**
 * Background jobs across servers (T9 "Here": job state and notices in the database).
 *
 * A job runs on the server that started it; its process cannot move. What must not happen is that the
 * model waits forever for a notice from a job whose server died. So:
 * - When a job starts, `job/started` is logged and the server holds a lease `job:<session>:<job>`, renewed
 *   while the process runs. When it ends on its own (or by `job_kill`), a long-lived `job-done:` lease
 *   records that; its completion notice goes through the inbox as before (T9).
 * - On the first step of each turn, a `job/started` with no `job/finished`, unknown to this server, whose
 *   lease is not live and which is not recorded done, ran on a server that stopped: this plugin logs
 *   `job/finished {status: "lost"}` and tells the model so in a `job-notice` message.
 *
 * Model-visible text: LOST_JOB_TEXT.
 */
import type { Plugin } from "../loop/plugin.js";
import { holdLease, type LeaseStore } from "../store/hold-lease.js";
import type { JobStore } from "../tools/jobs/job-store.js";

export const LOST_JOB_TEXT = (jobId: string, label: string) =>
  `background job ${jobId} (${label}) was running on a server that stopped; its outcome is unknown and its output is gone. Run it again if you still need it.`;

const DONE_TTL_MS = 30 * 24 * 3600 * 1000;
const jobLease = (sessionId: string, jobId: string) => `job:${sessionId}:${jobId}`;
const doneLease = (sessionId: string, jobId: string) => `job-done:${sessionId}:${jobId}`;

export function lostJobsPlugin(options: { owner: string; leaseTtlMs: number }): Plugin {
  return {
    name: "lost-jobs",
    needs: ["leases"], // T9: a job's "alive on this server" and "done" leases
    setup(ctx) {
      const store = ctx.capability("leases");
      const { sessionId } = ctx;
      const { owner, leaseTtlMs } = options;
      const explicitlyKilled = new Set<string>();
      const tracked = (inner: JobStore): JobStore => ({
        adopt(input) {
          const info = inner.adopt(input);
          ctx.log.add({ type: "job/started", data: { jobId: info.id, kind: info.kind, label: info.label } });
          // T9: the job's lease says "alive on this server" to the others while the job runs.
          const held = holdLease(store, jobLease(sessionId, info.id), owner, leaseTtlMs).catch(
            () => undefined,
          );
          void input.command.exited.then(async () => {
            const state = inner.get(info.id)?.state;
            // Killed by shutdown (killAll) is not "done": the next owner tells the model it was lost.
            if (state !== "killed" || explicitlyKilled.has(info.id))
              await store
                .acquireLease(doneLease(sessionId, info.id), owner, DONE_TTL_MS)
                .catch(() => undefined);
            await (await held)?.release();
          });
          return info;
        },
        get: (id) => inner.get(id),
        list: (o) => inner.list(o),
        readNew: (id, o) => inner.readNew(id, o),
        kill: (id) => {
          explicitlyKilled.add(id);
          return inner.kill(id);
        },
        killAll: () => inner.killAll(),
      });
      // Every job the tools start goes through the wrapper, which logs it and holds its lease.
      let jobs: JobStore | undefined;
      ctx.services.decorate("jobs", (inner) => {
        jobs = inner;
        return tracked(inner);
      });
      const local = jobs;
      if (!local) return;

      ctx.hooks.onWaterfall(
        "agent/pre-step",
        async (state) => {
          if (!state.firstStepOfTurn) return state;
          for (const job of await lostJobs(
            store,
            sessionId,
            ctx.log.events,
            (id) => local.get(id) !== undefined,
          )) {
            ctx.log.add({ type: "job/finished", data: { jobId: job.jobId, status: "lost" } });
            state.messages.push({ text: LOST_JOB_TEXT(job.jobId, job.label), source: "job-notice" });
          }
          return state;
        },
        { plugin: "lost-jobs" },
      );
    },
  };
}

async function lostJobs(
  store: Pick<LeaseStore, "getLease">,
  sessionId: string,
  events: readonly { type: string; data: unknown }[],
  local: (jobId: string) => boolean,
): Promise<Array<{ jobId: string; label: string }>> {
  const open = new Map<string, string>();
  for (const event of events) {
    const data = event.data as { jobId?: string; label?: string };
    if (event.type === "job/started" && data.jobId) open.set(data.jobId, data.label ?? "");
    if (event.type === "job/finished" && data.jobId) open.delete(data.jobId);
  }
  const lost: Array<{ jobId: string; label: string }> = [];
  for (const [jobId, label] of open) {
    if (local(jobId)) continue;
    if (await store.getLease(jobLease(sessionId, jobId))) continue; // still running on its server
    if (await store.getLease(doneLease(sessionId, jobId))) continue; // ended; its notice went to the inbox
    lost.push({ jobId, label });
  }
  return lost;
}
