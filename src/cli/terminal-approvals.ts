/**
 * T16 in a terminal: approval prompts and `ask_user_question` answered at the keyboard. Used only when
 * stdin is a terminal; otherwise `run` has no answerer and approvals fail closed.
 *
 * An empty or unrecognised answer is a deny (an unanswered prompt is a deny, Hermes).
 *
 * Prompts own the terminal: one prompt at a time (a second approval, from a parallel call or a child, waits
 * for the first to be answered), and while one is open the caller's status line and output are held
 * (`PromptHold`), so the question and its choices stay on screen and typed keys echo where they are read.
 *
 * The dangerous-command choices say exactly what each approves, narrowest first (seed 000): this call;
 * this exact command in this project from now on; every command of the matched pattern key in this
 * session; and, named as such, the key in every project permanently (config `command_allowlist`).
 *
 * Everything shown comes from the model, so it passes the one sanitiser (./render/terminal-text.ts): the
 * command whole, every line, with each control character made visible (a person approves what will run,
 * never what escape sequences make it look like); the tool, the reason, questions and options stripped.
 */
import { createInterface } from "node:readline/promises";
import type { ApprovalRequest, Approvals } from "../tools/approvals.js";
import type { QuestionAnswerer } from "../tools/interaction/ask-user-tool.js";
import type { ApprovalAnswer } from "../tools/types.js";
import { answerFor, approvalChoices, WAITING_FOR_YOU } from "./approval-choices.js";
import { hasControls, sanitize } from "./render/terminal-text.js";

/** Told when a prompt opens and closes, so a status line stops painting over it meanwhile. */
export type PromptHold = { hold(open: boolean): void };

async function ask(prompt: string, signal: AbortSignal): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(prompt, { signal })).trim();
  } catch {
    return "";
  } finally {
    rl.close();
  }
}

/** The prompt's text before the question: the tool, the whole command line by line, the reason. */
export function approvalPromptText(request: Pick<ApprovalRequest, "tool" | "summary" | "reason">): string {
  const lines = sanitize(request.summary, "show").split("\n");
  const warning = hasControls(request.summary)
    ? "  (it contains control characters, shown as ␛, ␍, ⟨U+…⟩: they would change what a terminal shows)\n"
    : "";
  return (
    `\napproval needed for ${sanitize(request.tool)} (bdsh is ${WAITING_FOR_YOU}):\n${lines.map((line) => `  │ ${line}\n`).join("")}` +
    `${warning}  reason: ${sanitize(request.reason)}\n`
  );
}

/** The approval channel and the question answerer of one terminal, sharing one prompt at a time. */
export function terminalPrompts(prompts: PromptHold): { approvals: Approvals; questions: QuestionAnswerer } {
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(use: () => Promise<T>): Promise<T> => {
    const turn = queue.then(async () => {
      prompts.hold(true);
      try {
        return await use();
      } finally {
        prompts.hold(false);
      }
    });
    queue = turn.catch(() => undefined);
    return turn;
  };
  return {
    approvals: {
      request: (request: ApprovalRequest) =>
        exclusive(async (): Promise<ApprovalAnswer> => {
          if (request.signal.aborted) return "cancel";
          const choices = approvalChoices(request.reason);
          process.stderr.write(approvalPromptText(request));
          for (const choice of choices) process.stderr.write(`  [${choice.key}] ${choice.label}\n`);
          const letters = choices.map((c) => (c.answer === "deny" ? c.key.toUpperCase() : c.key)).join("/");
          const typed = await ask(`  your choice (${letters}): `, request.signal);
          if (request.signal.aborted) return "cancel";
          return answerFor(typed, choices);
        }),
    },
    questions: {
      ask: ({ questions, signal }) => exclusive(() => askAll(questions, signal)),
    },
  };
}

async function askAll(
  questions: readonly { question: string; options?: readonly string[] | undefined }[],
  signal: AbortSignal,
): Promise<string[] | undefined> {
  const answers: string[] = [];
  for (const { question, options } of questions) {
    process.stderr.write(`\n${sanitize(question)} (bdsh is ${WAITING_FOR_YOU})\n`);
    for (const [i, option] of (options ?? []).entries())
      process.stderr.write(`  ${i + 1}. ${sanitize(option)}\n`);
    const answer = await ask("> ", signal);
    if (signal.aborted) return undefined;
    const picked = options && /^\d+$/.test(answer) ? options[Number(answer) - 1] : undefined;
    answers.push(picked ?? answer);
  }
  return answers;
}
