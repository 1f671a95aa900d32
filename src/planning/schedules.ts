/**
 * Schedule reminders (S8): the `schedule_*` tools over the store's schedule rows, and the delivery sweep
 * that `bdsh schedules run` (and later `serve`) runs.
 *
 * Invariants:
 * - Schedules are rows; a tool sees only its own session's schedules.
 * - Delivery claims occurrence T through the store, which queues the `[SCHEDULE REMINDER]` follow-up in the
 *   same write: however many workers sweep, each occurrence is delivered exactly once (DSH may repeat one
 *   after a crash; a claim here cannot).
 * - After downtime only the latest missed occurrence is delivered (./schedule-timing.ts).
 *
 * Model-visible strings: the tool descriptions below, `reminderText` (schedule-timing.ts), results as JSON
 * (`{"schedule": {…}}`, `{"schedules": […]}`, `{"deleted": id}`), errors `Error: <TimingError message>`,
 * `Error: no schedule <id> in this session`.
 */
import type { Plugin } from "../loop/plugin.js";
import type { ScheduleRow } from "../store/planning-rows.js";
import type { InboxItem, PlanningStore, Store } from "../store/store.js";
import { type Static, Type, toolParameters } from "../tools/schema.js";
import type { ToolDefinition, ToolExec, ToolOutput } from "../tools/types.js";
import {
  claimAt,
  nextOccurrence,
  reminderText,
  TIMING_PROPERTIES,
  type Timing,
  TimingError,
  timingFrom,
} from "./schedule-timing.js";

/** What the schedule tools need: the goals-and-schedules part of the store, not all of it. */
export type ScheduleSettings = { schedules: PlanningStore; minEverySeconds: number; now?: () => number };

declare module "../tools/types.js" {
  interface ToolServiceMap {
    scheduleSettings: ScheduleSettings;
  }
}

function view(row: ScheduleRow) {
  return {
    id: row.id,
    title: row.title,
    prompt: row.prompt,
    timing: row.timing,
    next_at: row.nextAt === null ? null : new Date(row.nextAt).toISOString(),
    last_occurrence_at: row.lastOccurrenceAt === null ? null : new Date(row.lastOccurrenceAt).toISOString(),
  };
}

const err = (text: string): ToolOutput => ({ text: `Error: ${text}`, isError: true });
const nowOf = (exec: ToolExec) => exec.services.get("scheduleSettings")?.now?.() ?? Date.now();
const minEvery = (exec: ToolExec) => exec.services.get("scheduleSettings")?.minEverySeconds ?? 60;
const schedulesOf = (exec: ToolExec): PlanningStore => exec.services.require("scheduleSettings").schedules;

async function own(exec: ToolExec, id: string): Promise<ScheduleRow | undefined> {
  const row = await schedulesOf(exec).getSchedule(id);
  return row?.sessionId === exec.session.sessionId ? row : undefined;
}

function timed(work: () => Promise<ToolOutput>): Promise<ToolOutput> {
  return work().catch((error: unknown) => {
    if (error instanceof TimingError) return err(error.message);
    throw error;
  });
}

const ScheduleCreateSchema = Type.Object(
  {
    title: Type.String({ minLength: 1 }),
    prompt: Type.String({ minLength: 1, description: "What you should do when the reminder arrives." }),
    ...TIMING_PROPERTIES,
  },
  { additionalProperties: false },
);

export const scheduleCreateTool: ToolDefinition<Static<typeof ScheduleCreateSchema>> = {
  name: "schedule_create",
  toolset: "schedule",
  description:
    "Schedule a reminder: at the given time the prompt comes back to this session as a message from the user. Give exactly one timing field; the title is a label only.",
  parameters: toolParameters(ScheduleCreateSchema),
  execute: (args, exec) =>
    timed(async () => {
      const now = nowOf(exec);
      const timing = timingFrom(args, now, minEvery(exec));
      const row = await schedulesOf(exec).createSchedule(exec.session.sessionId, {
        title: args.title,
        prompt: args.prompt,
        timing,
        nextAt: nextOccurrence(timing, now),
      });
      return { text: JSON.stringify({ schedule: view(row) }) };
    }),
};

const ScheduleListSchema = Type.Object({}, { additionalProperties: false });

export const scheduleListTool: ToolDefinition<Static<typeof ScheduleListSchema>> = {
  name: "schedule_list",
  toolset: "schedule",
  description: "List this session's scheduled reminders.",
  parameters: toolParameters(ScheduleListSchema),
  concurrency: "safe",
  readOnly: true,
  async execute(_args, exec) {
    const rows = await schedulesOf(exec).listSchedules(exec.session.sessionId);
    return { text: JSON.stringify({ schedules: rows.map(view) }) };
  },
};

const ScheduleUpdateSchema = Type.Object(
  {
    id: Type.String(),
    title: Type.Optional(Type.String()),
    prompt: Type.Optional(Type.String()),
    ...TIMING_PROPERTIES,
  },
  { additionalProperties: false },
);

export const scheduleUpdateTool: ToolDefinition<Static<typeof ScheduleUpdateSchema>> = {
  name: "schedule_update",
  toolset: "schedule",
  description: "Change a scheduled reminder's title, prompt or timing (a new timing replaces the old one).",
  parameters: toolParameters(ScheduleUpdateSchema),
  execute: (args, exec) =>
    timed(async () => {
      if (!(await own(exec, args.id))) return err(`no schedule ${args.id} in this session`);
      const { id, title, prompt, ...timingArgs } = args;
      const retime = Object.keys(timingArgs).some((k) => k !== "timezone");
      const now = nowOf(exec);
      const timing = retime ? timingFrom(timingArgs, now, minEvery(exec)) : undefined;
      const row = await schedulesOf(exec).updateSchedule(id, {
        ...(title !== undefined ? { title } : {}),
        ...(prompt !== undefined ? { prompt } : {}),
        ...(timing ? { timing, nextAt: nextOccurrence(timing, now) } : {}),
      });
      return row
        ? { text: JSON.stringify({ schedule: view(row) }) }
        : err(`no schedule ${id} in this session`);
    }),
};

const ScheduleDeleteSchema = Type.Object(
  {
    id: Type.String(),
  },
  { additionalProperties: false },
);

export const scheduleDeleteTool: ToolDefinition<Static<typeof ScheduleDeleteSchema>> = {
  name: "schedule_delete",
  toolset: "schedule",
  description: "Delete a scheduled reminder.",
  parameters: toolParameters(ScheduleDeleteSchema),
  async execute(args, exec) {
    if (!(await own(exec, args.id))) return err(`no schedule ${args.id} in this session`);
    await schedulesOf(exec).deleteSchedule(args.id);
    return { text: JSON.stringify({ deleted: args.id }) };
  },
};

export const scheduleTools = [scheduleCreateTool, scheduleListTool, scheduleUpdateTool, scheduleDeleteTool];

/** Registers the schedule tools on the agent's store. */
export function schedulesPlugin(settings: Omit<ScheduleSettings, "schedules">): Plugin {
  return {
    name: "schedules",
    needs: ["planning"], // S8: the schedule rows
    setup(ctx) {
      ctx.services.set("scheduleSettings", { ...settings, schedules: ctx.capability("planning") });
      for (const tool of scheduleTools) ctx.tools.register(tool, { source: "planning" });
    },
  };
}

/**
 * One sweep: claims every due occurrence and queues its reminder. Returns what this caller delivered
 * (another worker's claims are not in it).
 */
export async function deliverDueSchedules(store: Store, nowMs: number): Promise<InboxItem[]> {
  const delivered: InboxItem[] = [];
  for (const row of await store.planning.dueSchedules(nowMs)) {
    if (row.nextAt === null) continue;
    const { occurrenceAt, nextAt } = claimAt(row.timing as Timing, row.nextAt, nowMs);
    const item = await store.planning.claimScheduleOccurrence(
      row.id,
      { expectedNextAt: row.nextAt, occurrenceAt, nextAt },
      {
        queue: "next-turn",
        mode: "followup",
        source: "schedule",
        text: reminderText(row.id, occurrenceAt, row.prompt),
      },
    );
    if (item) delivered.push(item);
  }
  return delivered;
}
