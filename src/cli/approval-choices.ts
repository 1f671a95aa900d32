/**
 * The answers a person may give to an approval prompt, as run's prompt and chat's modal both offer them:
 * narrowest first, each saying exactly what it approves (seed 000: Hermes's "allow permanently" is the
 * last allow, named as every project, permanently).
 */

import { patternKeysOf } from "../tools/guards/command-guard.js";
import type { ApprovalAnswer } from "../tools/types.js";

/** What a person sees while bdsh waits for an answer (run's prompts, chat's status line). */
export const WAITING_FOR_YOU = "waiting for you";

export type ApprovalChoice = { key: string; answer: ApprovalAnswer; label: string };

/**
 * The choices offered for `reason`, narrowest first. A dangerous command's pattern keys are named in the
 * session and permanent choices; an approval that names none (a sandbox escalation) is once or deny.
 */
export function approvalChoices(reason: string): ApprovalChoice[] {
  const keys = patternKeysOf(reason);
  const once: ApprovalChoice = { key: "y", answer: "allow-once", label: "allow once" };
  const deny: ApprovalChoice = { key: "n", answer: "deny", label: "deny (the default)" };
  if (keys.length === 0) return [once, deny];
  const named = keys.map((key) => `\`${key}\``).join(" and ");
  return [
    once,
    { key: "c", answer: "allow-command", label: "allow this exact command in this project from now on" },
    { key: "s", answer: "allow-session", label: `allow every ${named} command in this session` },
    {
      key: "p",
      answer: "allow-always",
      label: `allow every ${named} command in every project, permanently (command_allowlist)`,
    },
    deny,
  ];
}

/** The answer `typed` picks among `choices`: its key letter; anything else is a deny. */
export function answerFor(typed: string, choices: readonly ApprovalChoice[]): ApprovalAnswer {
  const letter = typed.trim().toLowerCase();
  return choices.find((choice) => choice.key === letter)?.answer ?? "deny";
}
