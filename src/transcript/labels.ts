/**
 * Plain words for transcript items, shared by every view (terminals style them, the dashboard puts them in
 * elements). No colour, no markup; model-written parts are returned as they are and each view sanitises or
 * escapes them where it draws.
 */
import type { EventDataMap, MessageAbout, TurnEndReason, UserSource } from "../log/events.js";

/** What each harness message source is, in a person's words. */
export const SOURCE_LABELS: Record<Exclude<UserSource, "human">, string> = {
  "runtime-context": "runtime context",
  "time-context": "time",
  instructions: "instructions",
  skills: "skills",
  "model-switch": "model switch",
  "mode-switch": "mode switch",
  "policy-change": "policy change",
  "compact-checkpoint": "compaction checkpoint",
  "context-reinjection": "context after compaction",
  "tool-context": "reminder",
  "job-notice": "background job",
  delegation: "task from the parent",
  "subagent-settled": "subagent finished",
  "agent-message": "agent message",
  "goal-round": "goal round",
  "goal-wrapup": "goal wrap-up",
  continuation: "continuation check",
  schedule: "schedule",
  "turn-limit": "turn limit",
};

export function sourceLabel(source: UserSource): string {
  return source === "human" ? "you" : (SOURCE_LABELS[source] ?? source);
}

/**
 * Harness messages a person following the work wants to see in a terminal: they explain what happens next
 * (a job ended, a child reported, a schedule fired, a limit ended the turn). Context snapshots, instructions
 * and reminders stay out of the terminal (the dashboard shows them folded).
 */
export const NOTICE_SOURCES: ReadonlySet<UserSource> = new Set<UserSource>([
  "job-notice",
  "agent-message",
  "goal-wrapup",
  "schedule",
  "turn-limit",
]);

const CHECK_WORDS: Record<Extract<MessageAbout, { kind: "continuation" }>["check"], string> = {
  "empty-reply": "the reply had no visible text",
  "open-todos": "todos still open",
  "announced-action": "the reply announced a step it did not take",
  length: "the reply was cut at the output limit",
  "report-tool": "the result was not reported",
};

/** §9: "asked the model to continue: 2 todos open". */
export function nudgeLabel(about: Extract<MessageAbout, { kind: "continuation" }> | undefined): string {
  if (!about) return "asked the model to continue";
  const why =
    about.check === "open-todos" && about.openTodos !== undefined
      ? `${about.openTodos} todo${about.openTodos === 1 ? "" : "s"} open`
      : CHECK_WORDS[about.check];
  return `asked the model to continue: ${why ?? about.check}`;
}

export function goalRoundLabel(round: number, maxRounds: number): string {
  return `goal round ${round} of ${maxRounds}: the goal is not complete, the model continues`;
}

const END_WORDS: Record<TurnEndReason, string> = {
  completed: "done",
  "max-tokens": "cut at the output limit",
  blocked: "blocked",
  aborted: "interrupted",
  error: "failed",
  interrupted: "interrupted by a crash",
};

export function turnEndLabel(reason: TurnEndReason): string {
  return END_WORDS[reason] ?? reason;
}

/** A child's state in a few words: "running", "done", "failed", … */
export function childStateLabel(state: "running" | TurnEndReason): string {
  return state === "running" ? "running" : turnEndLabel(state);
}

export function gitRepairLines(data: Pick<EventDataMap["sandbox/git-repaired"], "repairs">): string[] {
  return data.repairs.map((repair) => {
    const settings = repair.settings.length > 0 ? ` ${repair.settings.join(", ")}` : "";
    const what =
      repair.action === "settings-removed"
        ? `removed${settings} from ${repair.path}`
        : `moved ${repair.path} aside${settings ? ` (${settings.trim()})` : ""}`;
    return `sandbox: git would have run a program: ${what}; original kept at ${repair.quarantine}`;
  });
}
