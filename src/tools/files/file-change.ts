/**
 * The `file-change` details of `write` and `edit` (log/tool-details.ts): the real change, computed from the
 * file's content before and after the call, never from the arguments (an edit's `old_string` says nothing
 * of `replace_all`'s other matches, nor of the CRLF the file is written back with).
 *
 * Bounded: MAX_DETAIL_DIFF_LINES diff lines (the rest counted in `omittedLines`), each cut to
 * MAX_DETAIL_LINE_CHARS. Line ends are compared as `\n`, so a CRLF file's diff shows its real lines.
 */
import { MAX_DETAIL_DIFF_LINES, MAX_DETAIL_LINE_CHARS, type ToolDetailsOf } from "../../log/tool-details.js";
import { type HunkLine, linesOf, textHunks } from "./line-diff.js";

export type FileChangeDetails = ToolDetailsOf<"file-change">;

/** `before` undefined: the call created the file. */
export function fileChangeDetails(
  path: string,
  before: string | undefined,
  after: string,
): FileChangeDetails {
  if (before === undefined) {
    const newLines = linesOf(normalise(after));
    return bounded(
      { kind: "file-change", path, change: "created", added: newLines.length, removed: 0 },
      newLines.map((text) => ({ kind: "+", text })),
    );
  }
  if (before.includes("\0")) {
    return {
      kind: "file-change",
      path,
      change: "modified",
      added: linesOf(normalise(after)).length,
      removed: 0,
      diff: [],
      binary: true,
    };
  }
  const { hunks, added, removed } = textHunks(normalise(before), normalise(after));
  return bounded({ kind: "file-change", path, change: "modified", added, removed }, hunks);
}

function bounded(head: Omit<FileChangeDetails, "diff">, lines: HunkLine[]): FileChangeDetails {
  const diff = lines
    .slice(0, MAX_DETAIL_DIFF_LINES)
    .map((line) => ({ kind: line.kind, text: cut(line.text) }));
  const omitted = lines.length - diff.length;
  return { ...head, diff, ...(omitted > 0 ? { omittedLines: omitted } : {}) };
}

const normalise = (text: string): string => (text.includes("\r") ? text.replace(/\r\n/g, "\n") : text);

function cut(text: string): string {
  return text.length > MAX_DETAIL_LINE_CHARS ? `${text.slice(0, MAX_DETAIL_LINE_CHARS - 1)}…` : text;
}
