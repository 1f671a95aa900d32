/**
 * Schedule timing (S8): `after_seconds | at | every_seconds (≥ 60) | daily | weekly | cron`, one per
 * schedule; recurring calendars go through croner. Times are epoch milliseconds.
 *
 * Invariants:
 * - After downtime only the latest missed occurrence is delivered: `claimAt(now)` names the newest
 *   occurrence at or before `now` and the first one after it.
 * - One-shots (`after_seconds`, `at`) have no next occurrence once claimed.
 */
import { Cron } from "croner";
import { type Static, Type } from "../tools/schema.js";

export type Timing =
  | { kind: "after_seconds"; seconds: number; from: number }
  | { kind: "at"; at: string }
  | { kind: "every_seconds"; seconds: number; anchor: number }
  | { kind: "daily"; time: string; timezone?: string }
  | { kind: "weekly"; weekday: string; time: string; timezone?: string }
  | { kind: "cron"; expression: string; timezone?: string };

export class TimingError extends Error {}

const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
const TIME = /^([01]?\d|2[0-3]):([0-5]\d)$/;

/** The timing fields a tool call may give (schedule_create, schedule_update); exactly one must be set. */
export const TIMING_PROPERTIES = {
  after_seconds: Type.Optional(Type.Number({ description: "Once, this many seconds from now." })),
  at: Type.Optional(Type.String({ description: "Once, at this ISO-8601 time." })),
  every_seconds: Type.Optional(Type.Number({ description: "Repeatedly, every N seconds (at least 60)." })),
  daily: Type.Optional(Type.String({ description: 'Every day at "HH:MM".' })),
  weekly: Type.Optional(Type.String({ description: 'Every week, "<weekday> HH:MM".' })),
  cron: Type.Optional(Type.String({ description: "A cron expression." })),
  timezone: Type.Optional(
    Type.String({ description: "IANA zone for daily, weekly and cron (default UTC)." }),
  ),
};
const TimingSchema = Type.Object(TIMING_PROPERTIES);
export type TimingArgs = Static<typeof TimingSchema>;

export function timingFrom(args: TimingArgs, nowMs: number, minEverySeconds: number): Timing {
  const given = (["after_seconds", "at", "every_seconds", "daily", "weekly", "cron"] as const).filter(
    (key) => args[key] !== undefined,
  );
  if (given.length !== 1)
    throw new TimingError(
      "give exactly one of after_seconds, at, every_seconds, daily, weekly or cron (a title holds no timing)",
    );
  const tz = args.timezone ? { timezone: args.timezone } : {};
  let timing: Timing;
  switch (given[0]) {
    case "after_seconds":
      if (!(args.after_seconds! > 0)) throw new TimingError("after_seconds must be positive");
      timing = { kind: "after_seconds", seconds: args.after_seconds!, from: nowMs };
      break;
    case "at":
      if (Number.isNaN(Date.parse(args.at!)))
        throw new TimingError(`at must be an ISO-8601 time, got "${args.at}"`);
      timing = { kind: "at", at: new Date(args.at!).toISOString() };
      break;
    case "every_seconds":
      if (!(args.every_seconds! >= minEverySeconds))
        throw new TimingError(`every_seconds must be at least ${minEverySeconds}`);
      timing = { kind: "every_seconds", seconds: args.every_seconds!, anchor: nowMs };
      break;
    case "daily":
      if (!TIME.test(args.daily!)) throw new TimingError(`daily must be HH:MM, got "${args.daily}"`);
      timing = { kind: "daily", time: args.daily!, ...tz };
      break;
    case "weekly": {
      const [day = "", time = ""] = args.weekly!.trim().toLowerCase().split(/\s+/);
      const weekday = WEEKDAYS.find((d) => d === day || d.slice(0, 3) === day);
      if (!weekday || !TIME.test(time))
        throw new TimingError(`weekly must be "<weekday> HH:MM", got "${args.weekly}"`);
      timing = { kind: "weekly", weekday, time, ...tz };
      break;
    }
    default:
      timing = { kind: "cron", expression: args.cron!, ...tz };
  }
  if (timing.kind === "cron" || timing.kind === "daily" || timing.kind === "weekly") cronOf(timing); // validates
  return timing;
}

function cronOf(timing: Extract<Timing, { kind: "daily" | "weekly" | "cron" }>): Cron {
  let pattern: string;
  if (timing.kind === "cron") pattern = timing.expression;
  else {
    const [hours, minutes] = timing.time.split(":");
    const day = timing.kind === "weekly" ? String(WEEKDAYS.indexOf(timing.weekday)) : "*";
    pattern = `${Number(minutes)} ${Number(hours)} * * ${day}`;
  }
  try {
    return new Cron(pattern, { paused: true, ...(timing.timezone ? { timezone: timing.timezone } : {}) });
  } catch (error) {
    throw new TimingError(`invalid schedule "${pattern}": ${(error as Error).message}`);
  }
}

/** The first occurrence strictly after `afterMs` (a one-shot: its time, whenever that is). */
export function nextOccurrence(timing: Timing, afterMs: number): number | null {
  switch (timing.kind) {
    case "after_seconds":
      return timing.from + timing.seconds * 1000;
    case "at":
      return Date.parse(timing.at);
    case "every_seconds": {
      const period = timing.seconds * 1000;
      const k = Math.max(1, Math.floor((afterMs - timing.anchor) / period) + 1);
      return timing.anchor + k * period;
    }
    default:
      return cronOf(timing).nextRun(new Date(afterMs))?.getTime() ?? null;
  }
}

/** For a due schedule: the newest occurrence at or before `nowMs` (≥ `dueAt`) and the next after it. */
export function claimAt(
  timing: Timing,
  dueAt: number,
  nowMs: number,
): { occurrenceAt: number; nextAt: number | null } {
  switch (timing.kind) {
    case "after_seconds":
    case "at":
      return { occurrenceAt: dueAt, nextAt: null };
    case "every_seconds": {
      const period = timing.seconds * 1000;
      const k = Math.floor((nowMs - timing.anchor) / period);
      const occurrenceAt = Math.max(dueAt, timing.anchor + k * period);
      return { occurrenceAt, nextAt: occurrenceAt + period };
    }
    default: {
      const cron = cronOf(timing);
      const previous = cron.previousRuns(1, new Date(nowMs + 1))[0]?.getTime() ?? dueAt;
      return {
        occurrenceAt: Math.max(dueAt, previous),
        nextAt: cron.nextRun(new Date(nowMs))?.getTime() ?? null,
      };
    }
  }
}

/** S8's framing of a delivered reminder (a follow-up user message into the same session). */
export function reminderText(scheduleId: string, occurrenceAt: number, prompt: string): string {
  return [
    "[SCHEDULE REMINDER]",
    "This is a scheduled message from the user",
    `schedule_id_json: ${JSON.stringify(scheduleId)}`,
    `occurrence_at: ${new Date(occurrenceAt).toISOString()}`,
    `reminder_prompt_json: ${JSON.stringify(prompt)}`,
  ].join("\n");
}
