/**
 * The one JSON form of an event, shared by `--json`, the HTTP event stream and tests (INTERFACE.md
 * "--json"): `{"sessionId","seq","type","turn"?,"step"?,"at","data"}` in that key order.
 */
import type { LogEvent } from "./events.js";

export function eventJson(event: LogEvent): string {
  const ordered: Record<string, unknown> = { sessionId: event.sessionId, seq: event.seq, type: event.type };
  if (event.turn !== undefined) ordered.turn = event.turn;
  if (event.step !== undefined) ordered.step = event.step;
  ordered.at = event.at;
  ordered.data = event.data;
  return JSON.stringify(ordered);
}
