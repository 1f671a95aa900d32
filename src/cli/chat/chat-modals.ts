/**
 * The chat's prompts as modals on the screen: an approval or a question opens one, keys answer it
 * (chat-input.ts `modalAction`), and an aborted call closes it unanswered, so no prompt outlives its call.
 */
import type { ApprovalRequest, Approvals } from "../../tools/approvals.js";
import type { QuestionAnswerer } from "../../tools/interaction/ask-user-tool.js";
import type { ApprovalAnswer } from "../../tools/types.js";
import { MODAL_COMMAND_ROWS } from "./chat-app.js";
import type { ChatScreen } from "./chat-screen.js";

/** Approvals as a modal with the command shown; the call's card shows the outcome, live and reopened alike. */
export function screenApprovals(screen: ChatScreen): Approvals {
  return {
    request: (request: ApprovalRequest) =>
      new Promise<ApprovalAnswer>((resolve) => {
        const done = (answer: ApprovalAnswer) => {
          request.signal.removeEventListener("abort", onAbort);
          if (screen.modal === modal) screen.closeModal();
          resolve(answer); // the call's card (or its refusal) shows the outcome, live and reopened alike
        };
        const onAbort = () => done("cancel");
        const modal = {
          kind: "approval" as const,
          tool: request.tool,
          summary: request.summary,
          reason: request.reason,
          answer: done,
        };
        if (request.signal.aborted) return resolve("cancel");
        request.signal.addEventListener("abort", onAbort);
        screen.approvalCommand(request.tool, request.summary, MODAL_COMMAND_ROWS);
        screen.openModal(modal);
      }),
  };
}

/** Questions (`ask_user`) as modals, one after another; an abort closes the open one and answers nothing. */
export function screenQuestions(screen: ChatScreen): QuestionAnswerer {
  return {
    async ask({ questions: list, signal }) {
      const answers: string[] = [];
      for (const { question, options: choices } of list) {
        const answer = await new Promise<string | undefined>((resolve) => {
          const done = (value: string | undefined) => {
            signal.removeEventListener("abort", onAbort);
            if (screen.modal === modal) screen.closeModal();
            resolve(value);
          };
          const onAbort = () => done(undefined);
          const modal = {
            kind: "question" as const,
            question,
            options: choices ?? [],
            typed: "",
            answer: done,
          };
          if (signal.aborted) return resolve(undefined);
          signal.addEventListener("abort", onAbort);
          screen.openModal(modal);
        });
        if (answer === undefined) return undefined;
        answers.push(answer);
      }
      return answers;
    },
  };
}
