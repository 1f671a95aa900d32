/**
 * Approvals and questions recorded in the session's log, whoever answers them: a person at this terminal
 * (`bdsh run`, `bdsh chat`) or over HTTP (src/server/interactions.ts). `sessions events` and every view then
 * show who was asked what and what they answered.
 *
 * Invariants:
 * - The request (`approval/requested`, `question/asked`) is flushed before the wait, so another process
 *   reading the log sees it pending.
 * - Every approval gets its `approval/answered`; an answerer that throws is recorded as the refusal
 *   `requestApproval` would make of it (`cancel` when the call was aborted, else `deny`), never an allow.
 * - A question left unanswered (skipped, timed out) gets no `question/answered`.
 */
import { randomUUID } from "node:crypto";
import type { ApprovalDecision, NewEvent } from "../../log/events.js";
import type { ApprovalRequest, Approvals } from "../approvals.js";
import type { QuestionAnswerer } from "./ask-user-tool.js";

/** Where the records go: the session's log (a plugin's `ctx.log`). */
export type InteractionLog = { add(...events: NewEvent[]): unknown; flush(): Promise<void> };

/** Records one approval around `answer`, which waits for the decision on the request with this id. */
export async function recordApproval(
  log: InteractionLog,
  request: ApprovalRequest,
  answer: (id: string) => Promise<ApprovalDecision>,
): Promise<ApprovalDecision> {
  const id = randomUUID();
  const { callId, tool, summary, reason } = request;
  log.add({ type: "approval/requested", data: { id, callId, tool, summary, reason } });
  await log.flush();
  let decision: ApprovalDecision;
  try {
    decision = await answer(id);
  } catch {
    decision = request.signal.aborted ? "cancel" : "deny";
  }
  log.add({ type: "approval/answered", data: { id, decision } });
  return decision;
}

/** Records one set of questions around `answer`. */
export async function recordQuestions(
  log: InteractionLog,
  request: Parameters<QuestionAnswerer["ask"]>[0],
  answer: (id: string) => Promise<string[] | undefined>,
): Promise<string[] | undefined> {
  const id = randomUUID();
  log.add({
    type: "question/asked",
    data: { id, callId: request.callId, questions: [...request.questions] },
  });
  await log.flush();
  const answers = await answer(id);
  if (answers !== undefined) log.add({ type: "question/answered", data: { id, answers } });
  return answers;
}

/** A terminal's approvals and questions, recorded as the server records its own. */
export function recordedInteractions(
  log: InteractionLog,
  channels: { approvals?: Approvals | undefined; questions?: QuestionAnswerer | undefined },
): { approvals?: Approvals; questions?: QuestionAnswerer } {
  const { approvals, questions } = channels;
  return {
    ...(approvals
      ? {
          approvals: { request: (request) => recordApproval(log, request, () => approvals.request(request)) },
        }
      : {}),
    ...(questions
      ? { questions: { ask: (request) => recordQuestions(log, request, () => questions.ask(request)) } }
      : {}),
  };
}
