/**
 * T16 in a terminal: approval prompts and `ask_user_question` answered at the keyboard. Used only when
 * stdin is a terminal; otherwise `run` has no answerer and approvals fail closed.
 *
 * An empty or unrecognised answer is a deny (an unanswered prompt is a deny, Hermes).
 */
import { createInterface } from "node:readline/promises";
import type { ApprovalRequest, Approvals } from "../tools/approvals.js";
import type { QuestionAnswerer } from "../tools/interaction/ask-user-tool.js";
import type { ApprovalAnswer } from "../tools/types.js";

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

export const terminalApprovals: Approvals = {
  async request(request: ApprovalRequest): Promise<ApprovalAnswer> {
    process.stderr.write(
      `\napproval needed for ${request.tool}: ${request.summary}\n  reason: ${request.reason}\n`,
    );
    const answer = (
      await ask("  allow? [y]es once, [s]ession, [a]lways, [N]o: ", request.signal)
    ).toLowerCase();
    if (request.signal.aborted) return "cancel";
    if (answer === "y" || answer === "yes") return "allow-once";
    if (answer === "s" || answer === "session") return "allow-session";
    if (answer === "a" || answer === "always") return "allow-always";
    return "deny";
  },
};

export const terminalQuestions: QuestionAnswerer = {
  async ask({ questions, signal }) {
    const answers: string[] = [];
    for (const { question, options } of questions) {
      process.stderr.write(`\n${question}\n`);
      for (const [i, option] of (options ?? []).entries()) process.stderr.write(`  ${i + 1}. ${option}\n`);
      const answer = await ask("> ", signal);
      if (signal.aborted) return undefined;
      const picked = options && /^\d+$/.test(answer) ? options[Number(answer) - 1] : undefined;
      answers.push(picked ?? answer);
    }
    return answers;
  },
};
