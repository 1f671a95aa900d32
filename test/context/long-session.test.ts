import { describe, expect, it } from "vitest";
import { isCheckpointText } from "../../src/context/compaction/texts.js";
import type { LogEvent } from "../../src/log/events.js";
import { findPairingError } from "../../src/log/pairing.js";
import { SurfaceProjector } from "../../src/log/surface.js";
import { testDatabaseUrl } from "../support/database.js";
import { GOAL, isSummaryRequest, longSession, prefixReuse } from "./long-session.js";

for (const storeKind of ["sqlite", "postgres"] as const) {
  describe(`C4 C5 C8 a 300-step session with a small window on ${storeKind}`, () => {
    it("compacts at least 3 times, never splits a tool pair, and finishes with todos and goal re-injected", async () => {
      const databaseUrl = storeKind === "postgres" ? testDatabaseUrl() : undefined;
      const { fixture, workRequests } = await longSession({
        steps: 300,
        ...(databaseUrl ? { databaseUrl } : {}),
      });
      try {
        await fixture.agent.followup("migrate every module");
        await fixture.agent.whenIdle();
        const events = await fixture.events();
        const ends = events.filter((e): e is LogEvent<"compaction/end"> => e.type === "compaction/end");
        expect(ends.filter((e) => e.data.ok).length).toBeGreaterThanOrEqual(3);
        expect(ends.filter((e) => !e.data.ok)).toEqual([]);
        expect(events.filter((e) => e.type === "agent/error")).toEqual([]);
        expect(events.at(-2)).toMatchObject({ type: "turn/end", data: { reason: "completed" } });
        expect(workRequests()).toHaveLength(300);

        // Every request went out with a well-paired history.
        const projector = new SurfaceProjector();
        for (const event of events) {
          if (event.type === "assistant/message")
            expect(findPairingError(projector.messages())).toBeUndefined();
          projector.apply(event);
        }
        // The checkpoint is a user message replacing a range; the task state follows it.
        const checkpoints = events.filter(
          (e): e is LogEvent<"user/message"> =>
            e.type === "user/message" && e.data.source === "compact-checkpoint",
        );
        expect(checkpoints.length).toBe(ends.filter((e) => e.data.ok).length);
        for (const checkpoint of checkpoints) {
          expect(isCheckpointText(checkpoint.data.text)).toBe(true);
          expect(checkpoint.data.surfaceOp?.startSeq).toBeGreaterThan(1);
          const next = events[checkpoint.seq] as LogEvent<"user/message">;
          expect(next.data.source).toBe("context-reinjection");
          expect(next.data.text).toContain(`Active goal (active): ${GOAL.objective}`);
          expect(next.data.text).toContain("- [in_progress] ");
        }
        // The final request carries the latest todo list after the last checkpoint.
        const last = workRequests().at(-1)!;
        const body = JSON.stringify(last.body?.messages);
        expect(body).toContain("<compacted-summary>");
        expect(body).toContain("[in_progress] verify the migration");
        // Prefix reuse is total on every step that is not a compaction.
        const all = fixture.fake.requests;
        const ratios = prefixReuse(workRequests());
        let compactedBetween = 0;
        let work = 0;
        const brokenOutsideCompaction: number[] = [];
        for (const request of all) {
          if (isSummaryRequest(request)) {
            compactedBetween++;
            continue;
          }
          if (work > 0 && compactedBetween === 0 && ratios[work - 1] !== 1)
            brokenOutsideCompaction.push(work);
          compactedBetween = 0;
          work++;
        }
        expect(brokenOutsideCompaction).toEqual([]);
      } finally {
        await fixture.close();
      }
    });
  });
}
