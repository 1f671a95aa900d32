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
import { fitLine } from "./render/style.js";
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

/** Lines of prose word-wrapped to `width` (the command itself is never wrapped: it is shown as it runs). */
const fitted = (text: string, width: number) =>
  text
    .split("\n")
    .flatMap((line) => fitLine(line, width))
    .map((line) => `${line}\n`)
    .join("");

/** The width prompts are wrapped to: the terminal's on stderr, none on a pipe. */
const promptWidth = () => (process.stderr.isTTY ? process.stderr.columns || 80 : Number.POSITIVE_INFINITY);

/**
 * The prompt's text before the question: the tool, the whole command line by line, the reason; the prose
 * word-wrapped to `width` (a narrow terminal cuts no word in two).
 */
export function approvalPromptText(
  request: Pick<ApprovalRequest, "tool" | "summary" | "reason">,
  width = Number.POSITIVE_INFINITY,
): string {
  const lines = sanitize(request.summary, "show").split("\n");
  const warning = hasControls(request.summary)
    ? "  (it contains control characters, shown as ␛, ␍, ⟨U+…⟩: they would change what a terminal shows)"
    : "";
  return (
    `\n${fitted(`approval needed for ${sanitize(request.tool)} (bdsh is ${WAITING_FOR_YOU}):`, width)}` +
    lines.map((line) => `  │ ${line}\n`).join("") +
    (warning ? fitted(warning, width) : "") +
    fitted(`  reason: ${sanitize(request.reason)}`, width)
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
          const width = promptWidth();
          process.stderr.write(approvalPromptText(request, width));
          for (const choice of choices)
            process.stderr.write(fitted(`  [${choice.key}] ${choice.label}`, width));
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
    const width = promptWidth();
    process.stderr.write(`\n${fitted(`${sanitize(question)} (bdsh is ${WAITING_FOR_YOU})`, width)}`);
    for (const [i, option] of (options ?? []).entries())
      process.stderr.write(fitted(`  ${i + 1}. ${sanitize(option)}`, width));
    const answer = await ask("> ", signal);
    if (signal.aborted) return undefined;
    const picked = options && /^\d+$/.test(answer) ? options[Number(answer) - 1] : undefined;
    answers.push(picked ?? answer);
  }
  return answers;
}
