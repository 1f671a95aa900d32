/**
 * The Ralph loop (P7, experimental, opt-in): each round is a fresh worker session (kind `ralph`, child of
 * the caller) that sees only the immutable objective and the previous round's handoff; the workspace is
 * the memory. The worker ends by calling `ralph_report` with a JSON handoff, which is validated and kept
 * in the worker session's metadata — the next round reads it from the store, not from memory.
 *
 * Invariants:
 * - Only the last handoff crosses rounds, clipped to `handoffMaxChars` (16,384).
 * - `continue` needs at least one nextSteps entry; `complete` needs evidence and no nextSteps; `blocked`
 *   needs a blocker. An invalid report is an error the worker can correct.
 * - At most `maxRounds` (256) rounds; a round whose worker never reports ends the loop as blocked.
 *
 * Model-visible strings: ralphRoundText, RALPH_REPORT_DESCRIPTION, the validation errors, "Handoff recorded.".
 */
import type { Store } from "../store/store.js";
import { type Static, StringEnum, Type, toolParameters } from "../tools/schema.js";
import type { ToolDefinition } from "../tools/types.js";

export type Handoff = {
  status: "continue" | "complete" | "blocked";
  summary: string;
  evidence: string[];
  nextSteps: string[];
  blocker?: string;
};

export const RALPH_REPORT = "ralph_report";

export const RALPH_REPORT_DESCRIPTION =
  "Report this round's handoff and end the round: status continue (with nextSteps), complete (with evidence, no nextSteps) or blocked (with the blocker). Call it exactly once, last.";

export function ralphRoundText(
  objective: string,
  round: number,
  maxRounds: number,
  handoff?: string,
): string {
  return [
    `You are one fresh worker in a Ralph loop (round ${round}/${maxRounds}). You get no parent conversation and no earlier worker's session. Do not call the ralph tool: this round is already its worker.`,
    `Objective (fixed): ${JSON.stringify(objective)}`,
    "The shared workspace and its current files are the long-term memory and the truth. Inspect them before acting, keep existing work, do concrete work within the objective, and verify what you change. The previous report below is only a short handoff: check it against the workspace.",
    handoff ? `Previous report:\n${handoff}` : "Previous report: none (this is the first round).",
    `End by calling ${RALPH_REPORT}: status continue with at least one nextSteps entry while useful work remains; complete only with concrete evidence and no nextSteps; blocked only when no meaningful progress is possible without a human or a change outside the workspace.`,
  ].join("\n\n");
}

export function validateHandoff(value: unknown): { handoff: Handoff } | { error: string } {
  if (typeof value !== "object" || value === null) return { error: "the report must be an object" };
  const v = value as Record<string, unknown>;
  const strings = (x: unknown) =>
    Array.isArray(x) && x.every((s) => typeof s === "string") ? (x as string[]) : undefined;
  const evidence = strings(v.evidence ?? []);
  const nextSteps = strings(v.nextSteps ?? []);
  if (!["continue", "complete", "blocked"].includes(String(v.status)))
    return { error: "status must be continue, complete or blocked" };
  if (typeof v.summary !== "string" || v.summary.trim() === "")
    return { error: "summary must be a non-empty string" };
  if (!evidence || !nextSteps) return { error: "evidence and nextSteps must be arrays of strings" };
  const status = v.status as Handoff["status"];
  if (status === "continue" && nextSteps.length === 0)
    return { error: "continue needs at least one nextSteps entry" };
  if (status === "complete" && (evidence.length === 0 || nextSteps.length > 0))
    return { error: "complete needs evidence and no nextSteps" };
  const blocker = typeof v.blocker === "string" ? v.blocker.trim() : "";
  if (status === "blocked" && !blocker) return { error: "blocked needs a blocker" };
  return { handoff: { status, summary: v.summary, evidence, nextSteps, ...(blocker ? { blocker } : {}) } };
}

const RalphReportSchema = Type.Object({
  status: StringEnum(["continue", "complete", "blocked"]),
  summary: Type.String(),
  evidence: Type.Optional(Type.Array(Type.String())),
  nextSteps: Type.Optional(Type.Array(Type.String())),
  blocker: Type.Optional(Type.String()),
});

/** Its arguments are checked again by `validateHandoff`: the handoff's rules span fields. */
export const ralphReportTool: ToolDefinition<Static<typeof RalphReportSchema>> = {
  name: RALPH_REPORT,
  toolset: "ralph",
  description: RALPH_REPORT_DESCRIPTION,
  parameters: toolParameters(RalphReportSchema),
  async execute(args, exec) {
    const checked = validateHandoff(args);
    if ("error" in checked) return { text: `Error: ${checked.error}`, isError: true };
    exec.concludeTurn();
    return { text: "Handoff recorded." };
  },
};

export type RalphOptions = {
  store: Store;
  parentSessionId: string;
  objective: string;
  maxRounds: number;
  handoffMaxChars: number;
  /** Runs a fresh worker agent on `sessionId` with `prompt` as its only input, until it is idle. */
  runWorker(sessionId: string, prompt: string): Promise<void>;
};

export type RalphResult = { status: Handoff["status"] | "no-report"; rounds: number; handoff?: Handoff };

export async function runRalph(options: RalphOptions): Promise<RalphResult> {
  let previous: string | undefined;
  for (let round = 1; round <= options.maxRounds; round++) {
    const session = await options.store.createSession({
      parentId: options.parentSessionId,
      kind: "ralph",
      title: `ralph round ${round}`,
      metadata: { ralph: { round } },
    });
    await options.runWorker(
      session.id,
      ralphRoundText(options.objective, round, options.maxRounds, previous),
    );
    const handoff = await reportOf(options.store, session.id);
    if (!handoff) return { status: "no-report", rounds: round };
    previous = JSON.stringify(handoff).slice(0, options.handoffMaxChars);
    await options.store.updateSession(session.id, { metadata: { ralph: { round, handoff: previous } } });
    if (handoff.status !== "continue") return { status: handoff.status, rounds: round, handoff };
  }
  return { status: "blocked", rounds: options.maxRounds };
}

/** The worker's last valid `ralph_report`, read from its log. */
async function reportOf(store: Store, sessionId: string): Promise<Handoff | undefined> {
  const events = await store.read(sessionId, { types: ["tool/call", "tool/result"] });
  const failed = new Set(
    events.flatMap((e) => (e.type === "tool/result" && e.data.isError ? [e.data.callId] : [])),
  );
  for (const event of [...events].reverse()) {
    if (event.type !== "tool/call" || event.data.name !== RALPH_REPORT || failed.has(event.data.callId))
      continue;
    try {
      const checked = validateHandoff(JSON.parse(event.data.arguments));
      if ("handoff" in checked) return checked.handoff;
    } catch {}
  }
  return undefined;
}
