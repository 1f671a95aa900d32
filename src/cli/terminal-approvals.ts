/**
 * T16 in a terminal: approval prompts and `ask_user_question` answered at the keyboard. Used only when
 * stdin is a terminal; otherwise `run` has no answerer and approvals fail closed.
 *
 * An empty or unrecognised answer is a deny (an unanswered prompt is a deny, Hermes).
 *
 * Everything shown comes from the model, so it passes the one sanitiser (./render/terminal-text.ts): the
 * command whole, every line, with each control character made visible (a person approves what will run,
 * never what escape sequences make it look like); the tool, the reason, questions and options stripped.
 */
import { createInterface } from "node:readline/promises";
import type { ApprovalRequest, Approvals } from "../tools/approvals.js";
import type { QuestionAnswerer } from "../tools/interaction/ask-user-tool.js";
import type { ApprovalAnswer } from "../tools/types.js";
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
    `\napproval needed for ${sanitize(request.tool)}:\n${lines.map((line) => `  │ ${line}\n`).join("")}` +
    `${warning}  reason: ${sanitize(request.reason)}\n`
  );
}

export const terminalApprovals = (prompts: PromptHold): Approvals => ({
  async request(request: ApprovalRequest): Promise<ApprovalAnswer> {
    prompts.hold(true);
    let answer: string;
    try {
      process.stderr.write(approvalPromptText(request));
      answer = (await ask("  allow? [y]es once, [s]ession, [a]lways, [N]o: ", request.signal)).toLowerCase();
    } finally {
      prompts.hold(false);
    }
    if (request.signal.aborted) return "cancel";
    if (answer === "y" || answer === "yes") return "allow-once";
    if (answer === "s" || answer === "session") return "allow-session";
    if (answer === "a" || answer === "always") return "allow-always";
    return "deny";
  },
});

export const terminalQuestions = (prompts: PromptHold): QuestionAnswerer => ({
  async ask({ questions, signal }) {
    prompts.hold(true);
    try {
      return await askAll(questions, signal);
    } finally {
      prompts.hold(false);
    }
  },
});

async function askAll(
  questions: readonly { question: string; options?: readonly string[] | undefined }[],
  signal: AbortSignal,
): Promise<string[] | undefined> {
  const answers: string[] = [];
  for (const { question, options } of questions) {
    process.stderr.write(`\n${sanitize(question)}\n`);
    for (const [i, option] of (options ?? []).entries())
      process.stderr.write(`  ${i + 1}. ${sanitize(option)}\n`);
    const answer = await ask("> ", signal);
    if (signal.aborted) return undefined;
    const picked = options && /^\d+$/.test(answer) ? options[Number(answer) - 1] : undefined;
    answers.push(picked ?? answer);
  }
  return answers;
}
