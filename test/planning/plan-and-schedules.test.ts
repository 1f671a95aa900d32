/**
 * Plan mode (P2) and schedule reminders (S8): switch messages, exit_plan_mode's three outcomes, timing, the
 * schedule tools, and delivery of only the latest missed occurrence as a `[SCHEDULE REMINDER]` follow-up.
 */
import { afterEach, describe, expect, it } from "vitest";
import { runHeadless } from "../../src/loop/headless.js";
import {
  APPROVED_TEXT,
  ENTER_TEXT,
  EXIT_TEXT,
  KEEP_PLANNING_TEXT,
  PLAN_SECTION,
  type PlanModeService,
  planModePlugin,
} from "../../src/planning/plan-mode.js";
import { claimAt, nextOccurrence, reminderText, timingFrom } from "../../src/planning/schedule-timing.js";
import { deliverDueSchedules, schedulesPlugin } from "../../src/planning/schedules.js";
import type { QuestionAnswerer } from "../../src/tools/interaction/ask-user-tool.js";
import { type PlanningFixture, planningFixture, userMessages } from "./fixture.js";

let fixture: PlanningFixture;
afterEach(async () => {
  await fixture?.close();
});

function answering(answer: string | undefined): QuestionAnswerer {
  return { ask: async () => (answer === undefined ? undefined : [answer]) };
}

async function planFixture(answer: string | undefined) {
  fixture = await planningFixture({
    plugins: [
      planModePlugin(),
      { name: "answers", setup: (ctx) => ctx.services.set("questionAnswerer", answering(answer)) },
    ],
    script: (_request, index) =>
      index === 0
        ? { toolCalls: [{ id: "x1", name: "exit_plan_mode", arguments: { plan: "1. do it" } }] }
        : { text: "ok" },
  });
  const planMode = fixture.agent.services.require("planMode") as PlanModeService;
  await planMode.switchTo("plan");
  await runHeadless(fixture.agent, "plan the change");
  const events = await fixture.events();
  const result = events.find((e) => e.type === "tool/result");
  return { planMode, events, text: result?.type === "tool/result" ? result.data.text : "" };
}

describe("P2 plan mode", () => {
  it("announces the switch as a user message, keeps the section fixed, and approves", async () => {
    const { planMode, events, text } = await planFixture("Approve");
    expect(userMessages(events, "mode-switch")).toEqual([ENTER_TEXT]);
    expect(text).toBe(APPROVED_TEXT);
    expect(planMode.mode).toBe("default");
    expect(events.filter((e) => e.type === "plan/mode").map((e) => e.data)).toEqual([
      { mode: "plan" },
      { mode: "default" },
    ]);
    const system = fixture.fake.requests[0]?.body?.messages as { role: string; content: string }[];
    expect(system[0]?.content).toContain(PLAN_SECTION);
  });

  it("keep planning is an error the model sees", async () => {
    const { planMode, text } = await planFixture("Keep planning");
    expect(text).toBe(`Error: ${KEEP_PLANNING_TEXT}`);
    expect(planMode.mode).toBe("plan");
  });

  it("a dismissed question concludes the turn", async () => {
    await planFixture(undefined);
    expect(fixture.fake.requests).toHaveLength(1);
  });

  it("switching back is announced too", async () => {
    const { planMode } = await planFixture("Keep planning");
    await planMode.switchTo("default");
    await runHeadless(fixture.agent, "never mind");
    expect(userMessages(await fixture.events(), "mode-switch")).toEqual([ENTER_TEXT, EXIT_TEXT]);
  });
});

describe("S8 schedule timing", () => {
  const now = Date.parse("2026-03-02T10:30:00Z"); // a Monday
  it("computes one-shots, intervals, daily, weekly and cron occurrences", () => {
    expect(nextOccurrence(timingFrom({ after_seconds: 90 }, now, 60), now)).toBe(now + 90_000);
    expect(nextOccurrence(timingFrom({ at: "2026-03-03T00:00:00Z" }, now, 60), now)).toBe(
      Date.parse("2026-03-03T00:00:00Z"),
    );
    expect(nextOccurrence(timingFrom({ every_seconds: 60 }, now, 60), now)).toBe(now + 60_000);
    expect(nextOccurrence(timingFrom({ daily: "09:00" }, now, 60), now)).toBe(
      Date.parse("2026-03-03T09:00:00Z"),
    );
    expect(nextOccurrence(timingFrom({ weekly: "wed 08:15" }, now, 60), now)).toBe(
      Date.parse("2026-03-04T08:15:00Z"),
    );
    expect(nextOccurrence(timingFrom({ cron: "0 */6 * * *" }, now, 60), now)).toBe(
      Date.parse("2026-03-02T12:00:00Z"),
    );
  });

  it("refuses bad timings: none or two, every_seconds under 60, malformed times", () => {
    expect(() => timingFrom({}, now, 60)).toThrow(/exactly one/);
    expect(() => timingFrom({ at: "2026-01-01T00:00:00Z", daily: "09:00" }, now, 60)).toThrow(/exactly one/);
    expect(() => timingFrom({ every_seconds: 30 }, now, 60)).toThrow("every_seconds must be at least 60");
    expect(() => timingFrom({ daily: "25:00" }, now, 60)).toThrow(/HH:MM/);
    expect(() => timingFrom({ cron: "not a cron" }, now, 60)).toThrow(/invalid schedule/);
  });

  it("after downtime claims only the latest missed occurrence", () => {
    const timing = timingFrom({ every_seconds: 600 }, now, 60);
    const later = now + 3_600_000 + 5_000; // six occurrences missed
    expect(claimAt(timing, now + 600_000, later)).toEqual({
      occurrenceAt: now + 3_600_000,
      nextAt: now + 4_200_000,
    });
    const daily = timingFrom({ daily: "09:00" }, now, 60);
    expect(claimAt(daily, Date.parse("2026-03-03T09:00:00Z"), Date.parse("2026-03-06T12:00:00Z"))).toEqual({
      occurrenceAt: Date.parse("2026-03-06T09:00:00Z"),
      nextAt: Date.parse("2026-03-07T09:00:00Z"),
    });
  });
});

describe("S8 schedule tools and delivery", () => {
  it("creates through the tool and delivers a [SCHEDULE REMINDER] follow-up into the same session", async () => {
    const clock = { now: Date.parse("2026-03-02T10:30:00Z") };
    fixture = await planningFixture({
      plugins: [schedulesPlugin({ minEverySeconds: 60, now: () => clock.now })],
      script: (_request, index) =>
        index === 0
          ? {
              toolCalls: [
                {
                  id: "s1",
                  name: "schedule_create",
                  arguments: { title: "standup", prompt: "Post the standup notes.", every_seconds: 3600 },
                },
              ],
            }
          : { text: "noted" },
    });
    await runHeadless(fixture.agent, "remind me hourly");
    const [row] = await fixture.store.planning.listSchedules(fixture.sessionId);
    expect(row).toMatchObject({ title: "standup", nextAt: clock.now + 3_600_000 });
    expect(await deliverDueSchedules(fixture.store, clock.now + 1000)).toEqual([]);
    const later = clock.now + 3 * 3_600_000 + 10; // two occurrences missed
    const delivered = await deliverDueSchedules(fixture.store, later);
    expect(delivered.map((i) => i.text)).toEqual([
      reminderText(row!.id, clock.now + 3 * 3_600_000, "Post the standup notes."),
    ]);
    expect(delivered[0]!.text).toMatch(
      /^\[SCHEDULE REMINDER\]\nThis is a scheduled message from the user\nschedule_id_json: "/,
    );
    expect(await deliverDueSchedules(fixture.store, later)).toEqual([]);
    await runHeadless(fixture.agent, undefined);
    expect(userMessages(await fixture.events(), "schedule")).toHaveLength(1);
  });

  it("lists, updates and deletes only this session's schedules", async () => {
    fixture = await planningFixture({
      plugins: [schedulesPlugin({ minEverySeconds: 60 })],
      script: (request, index) => {
        const steps = [
          { name: "schedule_create", arguments: { title: "a", prompt: "p", after_seconds: 60 } },
          { name: "schedule_update", arguments: { id: "missing", title: "b" } },
          { name: "schedule_list", arguments: {} },
        ];
        const step = steps[index];
        return step ? { toolCalls: [{ id: `t${index}`, ...step }] } : { text: String(request.index) };
      },
    });
    await runHeadless(fixture.agent, "go");
    const texts = (await fixture.events()).flatMap((e) => (e.type === "tool/result" ? [e.data.text] : []));
    expect(JSON.parse(texts[0]!).schedule.title).toBe("a");
    expect(texts[1]).toBe("Error: no schedule missing in this session");
    expect(JSON.parse(texts[2]!).schedules).toHaveLength(1);
  });
});
