/**
 * The store contract for goals and schedules (P3–P5, S8), run by `storeContract` against each
 * implementation: compare-and-set by revision, one goal per session, and claims that exactly one caller wins.
 */
import { describe, expect, it } from "vitest";
import { GoalExistsError } from "../../src/store/planning-rows.js";
import { type NewInboxItem, SessionNotFoundError, type Store } from "../../src/store/store.js";

function round(text: string): NewInboxItem {
  return { queue: "next-turn", mode: "followup", source: "goal-round", text };
}

export function planningContract(current: () => Store): void {
  describe("goals (P3)", () => {
    it("creates one active goal per session at revision 1, round 0", async () => {
      const store = current();
      const s = await store.createSession();
      const goal = await store.planning.createGoal(s.id, { objective: "ship it", maxRounds: 5 });
      expect(goal).toMatchObject({
        sessionId: s.id,
        revision: 1,
        phase: "active",
        roundsStarted: 0,
        maxRounds: 5,
      });
      expect(await store.planning.getGoal(s.id)).toEqual(goal);
      await expect(
        store.planning.createGoal(s.id, { objective: "again", maxRounds: 5 }),
      ).rejects.toBeInstanceOf(GoalExistsError);
      await expect(
        store.planning.createGoal("nope", { objective: "x", maxRounds: 1 }),
      ).rejects.toBeInstanceOf(SessionNotFoundError);
    });

    it("replaces a complete goal with a new one", async () => {
      const store = current();
      const s = await store.createSession();
      const first = await store.planning.createGoal(s.id, { objective: "one", maxRounds: 5 });
      await store.planning.updateGoal(s.id, first, { phase: "complete" });
      const second = await store.planning.createGoal(s.id, { objective: "two", maxRounds: 5 });
      expect(second.id).not.toBe(first.id);
      expect((await store.planning.getGoal(s.id))?.objective).toBe("two");
    });

    it("updates by compare-and-set on {id, revision}: of two writers at one revision, one wins", async () => {
      const store = current();
      const s = await store.createSession();
      const goal = await store.planning.createGoal(s.id, { objective: "x", maxRounds: 5 });
      const [a, b] = await Promise.all([
        store.planning.updateGoal(s.id, goal, { phase: "paused" }),
        store.planning.updateGoal(s.id, goal, { objective: "y" }),
      ]);
      expect([a, b].filter(Boolean)).toHaveLength(1);
      const blocked = await store.planning.updateGoal(s.id, (a ?? b)!, {
        phase: "blocked",
        blockedReason: "why",
      });
      expect(blocked).toMatchObject({ revision: 3, phase: "blocked", blockedReason: "why" });
      const cleared = await store.planning.updateGoal(s.id, blocked!, {
        phase: "active",
        blockedReason: null,
      });
      expect(cleared?.blockedReason).toBeUndefined();
    });

    it("claims round N once and queues its follow-up in the same write", async () => {
      const store = current();
      const s = await store.createSession();
      const goal = await store.planning.createGoal(s.id, { objective: "x", maxRounds: 2 });
      const claims = await Promise.all(
        [1, 2, 3].map(() => store.planning.claimGoalRound(s.id, { id: goal.id, round: 1 }, round("round 1"))),
      );
      const won = claims.filter((c) => c !== undefined);
      expect(won).toHaveLength(1);
      expect(won[0]!.goal).toMatchObject({ roundsStarted: 1, revision: 2 });
      expect(won[0]!.item).toMatchObject({ source: "goal-round", text: "round 1", sessionId: s.id });
      expect((await store.pendingInbox(s.id)).map((i) => i.text)).toEqual(["round 1"]);
      // out of order, over the cap, or a paused goal: nothing is written
      expect(
        await store.planning.claimGoalRound(s.id, { id: goal.id, round: 3 }, round("r3")),
      ).toBeUndefined();
      expect(await store.planning.claimGoalRound(s.id, { id: goal.id, round: 2 }, round("r2"))).toBeDefined();
      expect(
        await store.planning.claimGoalRound(s.id, { id: goal.id, round: 3 }, round("r3")),
      ).toBeUndefined();
      const now = (await store.planning.getGoal(s.id))!;
      const paused = await store.planning.updateGoal(s.id, now, { phase: "paused", objective: "x" });
      expect(paused?.roundsStarted).toBe(2);
      expect((await store.pendingInbox(s.id)).map((i) => i.text)).toEqual(["round 1", "r2"]);
    });

    it("deletes the goal", async () => {
      const store = current();
      const s = await store.createSession();
      await store.planning.createGoal(s.id, { objective: "x", maxRounds: 2 });
      expect(await store.planning.deleteGoal(s.id)).toBe(true);
      expect(await store.planning.getGoal(s.id)).toBeUndefined();
      expect(await store.planning.deleteGoal(s.id)).toBe(false);
    });
  });

  describe("schedules (S8)", () => {
    const timing = { every_seconds: 60 };

    it("creates, lists, updates and deletes", async () => {
      const store = current();
      const s = await store.createSession();
      const made = await store.planning.createSchedule(s.id, {
        title: "t",
        prompt: "p",
        timing,
        nextAt: 1_000,
      });
      expect(made).toMatchObject({ sessionId: s.id, title: "t", prompt: "p", timing, nextAt: 1_000 });
      expect(made.lastOccurrenceAt).toBeNull();
      expect(await store.planning.listSchedules(s.id)).toEqual([made]);
      const updated = await store.planning.updateSchedule(made.id, { prompt: "q", nextAt: null });
      expect(updated).toMatchObject({ title: "t", prompt: "q", nextAt: null });
      expect(await store.planning.updateSchedule("missing", { title: "x" })).toBeUndefined();
      expect(await store.planning.deleteSchedule(made.id)).toBe(true);
      expect(await store.planning.getSchedule(made.id)).toBeUndefined();
      await expect(
        store.planning.createSchedule("nope", { title: "t", prompt: "p", timing, nextAt: 1 }),
      ).rejects.toBeInstanceOf(SessionNotFoundError);
    });

    it("lists due schedules earliest first", async () => {
      const store = current();
      const s = await store.createSession();
      const late = await store.planning.createSchedule(s.id, {
        title: "late",
        prompt: "p",
        timing,
        nextAt: 2_000,
      });
      const early = await store.planning.createSchedule(s.id, {
        title: "early",
        prompt: "p",
        timing,
        nextAt: 1_000,
      });
      await store.planning.createSchedule(s.id, { title: "future", prompt: "p", timing, nextAt: 9_000 });
      await store.planning.createSchedule(s.id, { title: "fired", prompt: "p", timing, nextAt: null });
      expect((await store.planning.dueSchedules(2_000)).map((r) => r.id)).toEqual([early.id, late.id]);
    });

    it("claims occurrence T once and queues the reminder in the same write", async () => {
      const store = current();
      const s = await store.createSession();
      const made = await store.planning.createSchedule(s.id, {
        title: "t",
        prompt: "p",
        timing,
        nextAt: 1_000,
      });
      const item: NewInboxItem = { queue: "next-turn", mode: "followup", source: "schedule", text: "remind" };
      const claim = { expectedNextAt: 1_000, occurrenceAt: 1_000, nextAt: 61_000 };
      const results = await Promise.all(
        [1, 2, 3].map(() => store.planning.claimScheduleOccurrence(made.id, claim, item)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await store.pendingInbox(s.id)).map((i) => [i.source, i.text])).toEqual([
        ["schedule", "remind"],
      ]);
      expect(await store.planning.getSchedule(made.id)).toMatchObject({
        nextAt: 61_000,
        lastOccurrenceAt: 1_000,
      });
    });
  });
}
