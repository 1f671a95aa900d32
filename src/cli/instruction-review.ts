/**
 * A person reviews a trusted project's new or changed instruction files and skills (SECURITY.md row 1d):
 * `bdsh trust`, `bdsh trust --accept-instructions` and the question `bdsh chat` asks at start show each one
 * (a diff against the accepted content, or the whole file when there is none) and ask before the digests
 * are recorded. `bdsh run` and `bdsh chat` warn about each file they left out.
 *
 * The files may be the model's: every line is printed through the sanitiser in `show` mode, so an escape
 * sequence cannot hide a line from the person accepting it.
 */
import { createInterface } from "node:readline/promises";
import { ACCEPT_COMMAND } from "../config/instruction-files.js";
import type { InstructionVerdict, PendingFile } from "../config/instruction-review.js";
import type { EventDataMap, LogEvent } from "../log/events.js";
import { lineDiff } from "../tools/files/line-diff.js";
import type { Output } from "./output.js";
import { sanitize } from "./render/terminal-text.js";

type Unaccepted = Exclude<InstructionVerdict, "accepted">;

const WHY: Record<Unaccepted, string> = {
  new: "new: you have not accepted it",
  changed: "changed since you accepted it",
  unreviewed: "this directory was trusted before instruction review; accept its files once",
};

/** Prints each pending file: the whole content when new, else a diff against the accepted content. */
export function showPending(pending: readonly PendingFile[], output: Output): void {
  for (const file of pending) {
    const what = file.kind === "skill" ? "skill" : "instructions";
    output.err(`--- ${sanitize(file.name, "show")} (${what}; ${WHY[file.verdict]})`);
    // The last newline ends the last line; it is not a line of its own.
    const after = file.content.replace(/\n$/, "");
    const lines =
      file.before === undefined
        ? after.split("\n").map((text) => ({ kind: "+" as const, text }))
        : lineDiff(file.before.replace(/\n$/, ""), after);
    for (const line of lines) output.err(`${line.kind} ${sanitize(line.text, "show")}`);
  }
}

/** A y/N question on the terminal; only "y" or "yes" is yes. */
export async function confirm(question: string): Promise<boolean> {
  const ask = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^(y|yes)$/i.test((await ask.question(question)).trim());
  } finally {
    ask.close();
  }
}

/** One warning line per file a run left out, naming it and how to accept it. */
export function withheldWarnings(data: EventDataMap["instructions/withheld"]): string[] {
  return data.files.map(
    (file) =>
      `bdsh: warning: ${sanitize(file.path, "show")} was not loaded (${WHY[file.reason]}); review and accept it with \`${data.accept}\``,
  );
}

/** Prints the warnings of every `instructions/withheld` event among `events` (run, ralph rounds). */
export function warnWithheld(events: readonly LogEvent[], print: (line: string) => void): void {
  for (const event of events)
    if (event.type === "instructions/withheld") for (const line of withheldWarnings(event.data)) print(line);
}

/** The same warnings for files found before a session starts. */
export function pendingWarnings(pending: readonly PendingFile[]): string[] {
  return withheldWarnings({
    files: pending.map((f) => ({ path: f.path, kind: f.kind, reason: f.verdict })),
    accept: ACCEPT_COMMAND,
  });
}
