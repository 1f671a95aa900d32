/**
 * The newest `user/message` from one source (the time context, the skills catalog), found by scanning only
 * the events added since the last call: a per-step plugin asking this must not walk the whole log every
 * step. A reset log (its events replaced after a reload) starts the scan over.
 */
import type { LogEvent } from "../log/events.js";
import type { LogView } from "../loop/plugin.js";

export type UserMessageEvent = Extract<LogEvent, { type: "user/message" }>;

export function latestUserMessageTracker(source: string): (log: LogView) => UserMessageEvent | undefined {
  let scanned = 0;
  let latest: UserMessageEvent | undefined;
  return (log) => {
    if (log.events.length < scanned || (latest && log.events[latest.seq - 1] !== latest)) {
      scanned = 0;
      latest = undefined;
    }
    for (; scanned < log.events.length; scanned++) {
      const event = log.events[scanned]!;
      if (event.type === "user/message" && event.data.source === source) latest = event;
    }
    return latest;
  };
}
