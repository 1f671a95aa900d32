/**
 * Which instruction files and skills of a trusted project a person has not accepted yet (SECURITY.md row
 * 1d), and the gate the loaders ask before they read one. The record is ./trust.ts's; the files and digests
 * are ./instruction-files.ts's.
 *
 * - `accepted`: the content's digest is the one recorded for its name: it loads.
 * - `new`: no digest for that name; `changed`: another digest; `unreviewed`: the directory was trusted
 *   before instruction review (no record at all). None of these loads.
 */
import { basename, dirname, join } from "node:path";
import {
  acceptedCopy,
  digestOf,
  nameUnder,
  type ProjectFile,
  projectInstructionFiles,
} from "./instruction-files.js";
import { acceptedDigests, realDirectory } from "./trust.js";

export type InstructionVerdict = "accepted" | "new" | "changed" | "unreviewed";

/** What the loaders ask before reading a project file: its verdict, from the record read at start. */
export type InstructionGate = (path: string, content: string) => InstructionVerdict;

/** A file waiting for a person, with the content accepted before when there was one (for a diff). */
export type PendingFile = ProjectFile & { verdict: Exclude<InstructionVerdict, "accepted">; before?: string };

function verdictOf(
  accepted: Record<string, string> | undefined,
  name: string | undefined,
  content: string,
): InstructionVerdict {
  if (accepted === undefined) return "unreviewed";
  if (name === undefined) return "new";
  const digest = accepted[name];
  if (digest === undefined) return "new";
  return digest === digestOf(content) ? "accepted" : "changed";
}

/** The gate for the trusted directory `root`: a file outside it is never accepted. */
export function instructionGate(home: string, root: string): InstructionGate {
  const accepted = acceptedDigests(home, root);
  return (path, content) => {
    // By real path, so a symlinked working directory names the same file.
    const name = nameUnder(root, join(realDirectory(dirname(path)), basename(path)));
    return verdictOf(accepted, name, content);
  };
}

/** The project files under `root` that would load but wait for a person, and every file present. */
export function pendingInstructions(
  home: string,
  root: string,
  cwd?: string,
): { pending: PendingFile[]; present: ProjectFile[]; unreviewed: boolean } {
  const accepted = acceptedDigests(home, root);
  const present = projectInstructionFiles(root, cwd);
  const pending: PendingFile[] = [];
  for (const file of present) {
    const verdict = verdictOf(accepted, file.name, file.content);
    if (verdict === "accepted") continue;
    const previous = accepted?.[file.name];
    const before = previous === undefined ? undefined : acceptedCopy(home, previous);
    pending.push({ ...file, verdict, ...(before === undefined ? {} : { before }) });
  }
  return { pending, present, unreviewed: accepted === undefined };
}
