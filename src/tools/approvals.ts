/**
 * The approval channel (T16) and the one function every approval goes through.
 *
 * Invariants:
 * - Policy `never`, or no `approvals` service, fails closed with T16's "no approval channel" text.
 * - An answerer that throws (or never answers before the signal aborts) is a deny or a cancel, never an
 *   allow: an unanswered prompt is a deny (Hermes).
 * - Approval state lives in the objects passed in, never in process globals (STYLE: Hermes bypasses).
 * - Policy `auto` (S7) asks the `autoReviewer` service first. Its `allow` is one call only (never a
 *   session or permanent approval); `ask` goes on to the person's channel when there is one, and is a deny
 *   when there is none; no reviewer, or a reviewer that throws, is a deny.
 */
import type { ApprovalAnswer, ToolExec } from "./types.js";

export type ApprovalRequest = {
  tool: string;
  /** One line for the prompt: what will run. */
  summary: string;
  /** Why approval is needed (the matched pattern, the escalation asked for). */
  reason: string;
  callId: string;
  signal: AbortSignal;
};

export interface Approvals {
  request(request: ApprovalRequest): Promise<ApprovalAnswer>;
}

/** S7: what the auto-reviewer concluded. `ask`: only a person's explicit consent may allow it. */
export type ReviewVerdict = { outcome: "allow" | "deny" | "ask"; note: string };

export interface AutoReviewer {
  review(request: ApprovalRequest): Promise<ReviewVerdict>;
}

declare module "./types.js" {
  interface ToolServiceMap {
    approvals: Approvals;
    autoReviewer: AutoReviewer;
  }
}

export const rejectedText = (tool: string) => `Error: the user rejected tool "${tool}"`;
export const cancelledText = (tool: string) => `Error: approval for tool "${tool}" was cancelled`;
export const noChannelText = (tool: string) =>
  `Error: tool "${tool}" requires approval, but no approval channel is available`;
export const reviewerDeniedText = (tool: string, note: string) =>
  `Error: the auto-reviewer refused tool "${tool}" (${note})`;

export type ApprovalOutcome =
  | { kind: "allowed"; answer: "allow-once" | "allow-session" | "allow-command" | "allow-always" }
  | { kind: "refused"; answer: "deny" | "cancel" | "no-channel"; reviewerNote?: string };

export async function requestApproval(
  exec: ToolExec,
  request: Omit<ApprovalRequest, "callId" | "signal" | "tool">,
): Promise<ApprovalOutcome> {
  if (exec.approval === "never") return { kind: "refused", answer: "no-channel" };
  const full: ApprovalRequest = { ...request, tool: exec.toolName, callId: exec.callId, signal: exec.signal };
  const channel = exec.services.get("approvals");
  if (exec.approval === "auto") {
    const verdict = await autoReview(exec, full);
    if (verdict.outcome === "allow") return { kind: "allowed", answer: "allow-once" };
    if (exec.signal.aborted) return { kind: "refused", answer: "cancel" };
    // S7: medium risk runs only with explicit consent, which only a person can give.
    if (verdict.outcome === "deny" || !channel)
      return { kind: "refused", answer: "deny", reviewerNote: verdict.note };
  }
  if (!channel) return { kind: "refused", answer: "no-channel" };
  let answer: ApprovalAnswer;
  try {
    answer = await channel.request(full);
  } catch {
    answer = exec.signal.aborted ? "cancel" : "deny";
  }
  if (
    answer === "allow-once" ||
    answer === "allow-session" ||
    answer === "allow-command" ||
    answer === "allow-always"
  ) {
    return { kind: "allowed", answer };
  }
  return { kind: "refused", answer: answer === "cancel" ? "cancel" : "deny" };
}

/** S7: a missing reviewer or one that throws is a deny, never an allow. */
async function autoReview(exec: ToolExec, request: ApprovalRequest): Promise<ReviewVerdict> {
  const reviewer = exec.services.get("autoReviewer");
  if (!reviewer) return { outcome: "deny", note: "no reviewer is configured" };
  try {
    return await reviewer.review(request);
  } catch (error) {
    return {
      outcome: "deny",
      note: `the review failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/** A scripted answerer: tests and headless runs with a fixed policy. */
export class ScriptedApprovals implements Approvals {
  readonly requests: ApprovalRequest[] = [];
  constructor(
    private readonly answer: (request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>,
  ) {}
  async request(request: ApprovalRequest): Promise<ApprovalAnswer> {
    this.requests.push(request);
    return this.answer(request);
  }
}
