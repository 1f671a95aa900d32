/**
 * The approval channel (T16) and the one function every approval goes through.
 *
 * Invariants:
 * - Policy `never`, or no `approvals` service, fails closed with T16's "no approval channel" text.
 * - An answerer that throws (or never answers before the signal aborts) is a deny or a cancel, never an
 *   allow: an unanswered prompt is a deny (Hermes).
 * - Approval state lives in the objects passed in, never in process globals (STYLE: Hermes bypasses).
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

declare module "./types.js" {
  interface ToolServiceMap {
    approvals: Approvals;
  }
}

export const rejectedText = (tool: string) => `Error: the user rejected tool "${tool}"`;
export const cancelledText = (tool: string) => `Error: approval for tool "${tool}" was cancelled`;
export const noChannelText = (tool: string) =>
  `Error: tool "${tool}" requires approval, but no approval channel is available`;

export type ApprovalOutcome =
  | { kind: "allowed"; answer: "allow-once" | "allow-session" | "allow-always" }
  | { kind: "refused"; answer: "deny" | "cancel" | "no-channel" };

export async function requestApproval(
  exec: ToolExec,
  request: Omit<ApprovalRequest, "callId" | "signal" | "tool">,
): Promise<ApprovalOutcome> {
  const channel = exec.approval === "never" ? undefined : exec.services.get("approvals");
  if (!channel) return { kind: "refused", answer: "no-channel" };
  let answer: ApprovalAnswer;
  try {
    answer = await channel.request({
      ...request,
      tool: exec.toolName,
      callId: exec.callId,
      signal: exec.signal,
    });
  } catch {
    answer = exec.signal.aborted ? "cancel" : "deny";
  }
  if (answer === "allow-once" || answer === "allow-session" || answer === "allow-always") {
    return { kind: "allowed", answer };
  }
  return { kind: "refused", answer: answer === "cancel" ? "cancel" : "deny" };
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
