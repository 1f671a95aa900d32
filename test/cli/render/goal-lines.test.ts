/**
 * P4 in the terminal: a goal round is one short line (`goal round 4/256`), and a goal the harness blocked
 * says why (`blocked: no progress in 3 rounds`).
 */
import { describe, expect, it } from "vitest";
import { itemLines } from "../../../src/cli/render/item-lines.js";
import { palette } from "../../../src/cli/render/style.js";
import type { EventDataMap, EventType, LogEvent } from "../../../src/log/events.js";
import { Transcript } from "../../../src/transcript/projection.js";

let seq = 0;
const event = <T extends EventType>(type: T, data: EventDataMap[T]) =>
  ({ sessionId: "s", seq: ++seq, type, at: "2026-01-01T00:00:00.000Z", data }) as LogEvent;

function lines(events: LogEvent[]): string[] {
  const transcript = new Transcript();
  return transcript.add(events).flatMap((change) => itemLines(change, palette(false), 60));
}

describe("goal lines", () => {
  it("a round is one short line, its model-facing text not shown", () => {
    const shown = lines([
      event("goal/round", { round: 4, maxRounds: 256 }),
      event("user/message", { text: "<goal_round>\nObjective: x\n</goal_round>", source: "goal-round" }),
    ]);
    expect(shown).toEqual(["◎ goal round 4/256"]);
  });

  it("a blocked goal says why", () => {
    const goal = {
      id: "g",
      revision: 3,
      objective: "ship it",
      phase: "blocked" as const,
      roundsStarted: 3,
      maxRounds: 256,
      blockedReason: "no progress in 3 rounds",
    };
    expect(lines([event("goal/updated", { goal, action: "blocked" })])).toEqual([
      "◎ goal blocked: ship it (blocked: no progress in 3 rounds)",
    ]);
  });
});
