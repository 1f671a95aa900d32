/**
 * SP5: the time context. Before a step, at most once every `refreshMs` (default 10 minutes; 0 means every
 * step), a three-line user message says what time it is, which zone to read unqualified times in, and how
 * long it has been since the model last saw anything. It is a user message, never a system-prompt edit, so
 * the cached prefix survives (ARCHITECTURE "one idea").
 *
 * Zone rules: the zones the caller reports (e.g. the browsers attached to a session); none → the configured
 * zone, else the process zone; several different ones → "mixed"; nothing at all → "unavailable".
 * Durations are compact whole seconds (`1h2m5s`). The clock and zones are injectable for tests.
 *
 * Model experience:
 *   Time sampled while preparing turn 3, step 1: 2025-05-01T09:30:00+02:00[Europe/Berlin]
 *   Time zone for this request: Europe/Berlin. Read dates and times that name no zone in this zone.
 *   Elapsed since the previous message you saw: 4m12s.
 * Later steps say "Elapsed since the previous time context:". Mixed: "Time zone for this request: mixed
 * [A, B]. Ask the user which zone they mean for dates and times that name none." Missing: "… unavailable. …"
 */
import type { LogView, Plugin } from "../loop/plugin.js";
import { latestUserMessageTracker } from "./latest-user-message.js";

export type TimeContextOptions = {
  refreshMs?: number;
  /** Configured zone (`context.time_zone`); empty or undefined means the process zone. */
  timeZone?: string;
  /** Zones reported by the people attached to this session, when the caller knows them. */
  zones?: () => readonly string[];
  now?: () => Date;
  processZone?: () => string | undefined;
};

export function compactDuration(ms: number): string {
  let seconds = Math.max(0, Math.floor(ms / 1000));
  const days = Math.floor(seconds / 86_400);
  seconds -= days * 86_400;
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  const parts = [days && `${days}d`, hours && `${hours}h`, minutes && `${minutes}m`, `${seconds}s`];
  const text = parts.filter(Boolean).join("");
  return text.replace(/^(.+?)0s$/, "$1");
}

/**
 * The process's time zone. Building an `Intl.DateTimeFormat` to ask is dear (it was a few percent of a
 * served turn's CPU, once per step), and V8 reads the zone again only when `TZ` changes, so neither do we.
 */
let zoneOf: { tz: string | undefined; zone: string | undefined } | undefined;
function defaultProcessZone(): string | undefined {
  const tz = process.env.TZ;
  if (zoneOf?.tz !== tz || zoneOf === undefined)
    zoneOf = { tz, zone: Intl.DateTimeFormat().resolvedOptions().timeZone };
  return zoneOf.zone;
}

/** One formatter per zone: building an `Intl.DateTimeFormat` costs far more than using one. */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** `YYYY-MM-DDTHH:MM:SS+HH:MM[Zone]` for `date` in `zone`. */
export function zonedTimestamp(date: Date, zone: string): string {
  const parts = Object.fromEntries(
    formatterFor(zone)
      .formatToParts(date)
      .map((p) => [p.type, p.value]),
  );
  const local = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  const offsetMinutes = Math.round((local - Math.floor(date.getTime() / 1000) * 1000) / 60_000);
  const sign = offsetMinutes < 0 ? "-" : "+";
  const abs = Math.abs(offsetMinutes);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}[${zone}]`;
}

export type ZoneChoice =
  | { kind: "one"; zone: string }
  | { kind: "mixed"; zones: string[] }
  | { kind: "none" };

export function chooseZone(
  reported: readonly string[],
  configured: string | undefined,
  processZone: string | undefined,
): ZoneChoice {
  const distinct = [...new Set(reported.filter(Boolean))];
  if (distinct.length > 1) return { kind: "mixed", zones: distinct };
  const zone = distinct[0] || configured || processZone;
  return zone ? { kind: "one", zone } : { kind: "none" };
}

export function timeContextText(input: {
  turn: number;
  step: number;
  now: Date;
  zone: ZoneChoice;
  elapsedMs: number | undefined;
}): string {
  const { turn, step, now, zone } = input;
  const sampleZone = zone.kind === "one" ? zone.zone : "UTC";
  const zoneLine =
    zone.kind === "one"
      ? `Time zone for this request: ${zone.zone}. Read dates and times that name no zone in this zone.`
      : zone.kind === "mixed"
        ? `Time zone for this request: mixed [${zone.zones.join(", ")}]. Ask the user which zone they mean for dates and times that name none.`
        : "Time zone for this request: unavailable. Ask the user which zone they mean for dates and times that name none.";
  const since =
    step === 1 ? "Elapsed since the previous message you saw" : "Elapsed since the previous time context";
  const elapsed = input.elapsedMs === undefined ? "unavailable" : compactDuration(input.elapsedMs);
  return [
    `Time sampled while preparing turn ${turn}, step ${step}: ${zonedTimestamp(now, sampleZone)}`,
    zoneLine,
    `${since}: ${elapsed}.`,
  ].join("\n");
}

/** When the model last saw something: the newest surface node written before this turn. */
function lastVisibleAt(log: LogView, turn: number): string | undefined {
  const nodes = log.surface.surface;
  for (let i = nodes.length - 1; i >= 0; i--) {
    const event = log.events[nodes[i]!.seq - 1];
    if (event && (event.turn ?? 0) < turn) return event.at;
  }
  return undefined;
}

export function timeContextPlugin(options: TimeContextOptions = {}): Plugin {
  const refreshMs = options.refreshMs ?? 600_000;
  const now = options.now ?? (() => new Date());
  const processZone = options.processZone ?? defaultProcessZone;
  return {
    name: "time-context",
    setup(ctx) {
      const lastTimeContext = latestUserMessageTracker("time-context");
      ctx.hooks.onWaterfall(
        "agent/pre-step",
        (state) => {
          const at = now();
          const previous = lastTimeContext(ctx.log);
          if (previous && refreshMs > 0 && at.getTime() - Date.parse(previous.at) < refreshMs) return state;
          const reference = state.step === 1 ? lastVisibleAt(ctx.log, state.turn) : previous?.at;
          const elapsedMs = reference === undefined ? undefined : at.getTime() - Date.parse(reference);
          const zone = chooseZone(options.zones?.() ?? [], options.timeZone, processZone());
          const text = timeContextText({ turn: state.turn, step: state.step, now: at, zone, elapsedMs });
          // SP5: prepended, so the time comes before the step's other context messages.
          return { ...state, messages: [{ text, source: "time-context" }, ...state.messages] };
        },
        { plugin: "time-context", prepend: true },
      );
    },
  };
}
