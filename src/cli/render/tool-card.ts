/**
 * A tool call and its result as a few terminal lines (issue 15): what ran, and how it went.
 *
 * - bash: `$ <command>` with its description, the last lines of output, `exit <n>` in red when the
 *   result carries `[exit code: n]` (src/tools/bash/bash-result.ts markers), timeouts and kills in yellow.
 * - edit / write / apply_patch: a coloured unified diff, cut to MAX_DIFF_LINES. The tools' results say only
 *   "updated", so the diff comes from the arguments (`old_string` → `new_string`, `content`, the patch).
 * - todo tools (`todo_write`, P1): a checklist, `[x]` done, `[~]` in progress, `[ ]` pending.
 * - anything else: the name and a short summary of the arguments.
 * Errors are red. Arguments are model output: any shape is accepted, nothing here throws, and every line is
 * sanitised and cut to `width`.
 */
import { lineDiff } from "./line-diff.js";
import { type Palette, sanitize, truncate } from "./style.js";

export const OUTPUT_TAIL_LINES = 6;
export const MAX_DIFF_LINES = 24;
const ERROR_LINES = 4;

type Call = { name: string; arguments: string };
type Result = { text: string; isError?: boolean };
type Args = Record<string, unknown>;

export function toolCard(call: Call, result: Result | undefined, p: Palette, width: number): string[] {
  let lines: string[];
  try {
    lines = cardLines(call, parseArgs(call.arguments), result, p);
  } catch {
    lines = [`${mark(result, p)} ${p.bold(call.name)}`];
  }
  return lines.map((line) => truncate(line, Math.max(8, width - 1)));
}

/** A call's arguments as an object (model output: anything else is `{}`). */
export function parseArgs(text: string): Args {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Args) : {};
  } catch {
    return {};
  }
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

function mark(result: Result | undefined, p: Palette, failed = result?.isError === true): string {
  if (result === undefined) return p.yellow("•");
  return failed ? p.red("✗") : p.green("✓");
}

/** Body lines sit under the header behind a dim bar. */
const body = (p: Palette, text: string) => `  ${p.dim("│")} ${text}`;

function cardLines(call: Call, args: Args, result: Result | undefined, p: Palette): string[] {
  const name = sanitize(call.name);
  if (name === "bash") return bashCard(args, result, p);
  const change = fileChangeOf(name, args, call.arguments);
  if (change) return fileCard(name, change, result, p);
  if (name.startsWith("todo") || name === "update_plan") {
    const card = todoCard(name, args, result, p);
    if (card) return card;
  }
  return genericCard(name, args, call.arguments, result, p);
}

// --- bash ---

const MARKER =
  /^\[(exit code|timed out after|killed by signal|stopped|still running after|output truncated|sandbox)[^\]]*\]$/;

function bashCard(args: Args, result: Result | undefined, p: Palette): string[] {
  const command = sanitize(str(args.command) ?? "");
  const commandLines = command.split("\n");
  const shown =
    commandLines[0]! + (commandLines.length > 1 ? p.dim(` … (+${commandLines.length - 1} lines)`) : "");
  const description = str(args.description);
  const exit = result ? exitCodeOf(result.text) : undefined;
  const failed = result !== undefined && (result.isError === true || (exit !== undefined && exit !== 0));
  const header = `${mark(result, p, failed)} ${p.bold("$")} ${shown}${description ? p.dim(`  # ${sanitize(description)}`) : ""}`;
  if (!result) return [header];
  const lines = [header];
  const output: string[] = [];
  const notes: string[] = [];
  for (const line of sanitize(result.text).split("\n")) {
    if (MARKER.test(line)) {
      if (line.startsWith("[exit code")) continue;
      notes.push(line.startsWith("[sandbox") ? p.red(line) : p.yellow(line));
    } else if (line !== "[stderr]" && line !== "(no output)") {
      output.push(line);
    }
  }
  while (output.length > 0 && output.at(-1)!.trim() === "") output.pop();
  if (output.length > OUTPUT_TAIL_LINES) {
    lines.push(body(p, p.dim(`… ${output.length - OUTPUT_TAIL_LINES} more lines`)));
  }
  for (const line of output.slice(-OUTPUT_TAIL_LINES))
    lines.push(body(p, result.isError ? p.red(line) : p.dim(line)));
  for (const note of notes) lines.push(body(p, note));
  if (exit !== undefined && exit !== 0) lines.push(body(p, p.red(p.bold(`exit ${exit}`))));
  return lines;
}

/** `[exit code: 3]` → 3; none (the command exited 0 or did not finish) → undefined. */
export function exitCodeOf(text: string): number | undefined {
  const match = /^\[exit code: (-?\d+)\]$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

// --- diffs ---

function diffLines(kinds: { kind: string; text: string }[], p: Palette): string[] {
  const out = kinds.slice(0, MAX_DIFF_LINES).map(({ kind, text }) => {
    const line = `${kind} ${sanitize(text)}`;
    if (kind === "+") return body(p, p.green(line));
    if (kind === "-") return body(p, p.red(line));
    if (kind === "@") return body(p, p.cyan(sanitize(text)));
    return body(p, p.dim(line));
  });
  if (kinds.length > MAX_DIFF_LINES)
    out.push(body(p, p.dim(`… ${kinds.length - MAX_DIFF_LINES} more lines`)));
  return out;
}

function errorLines(result: Result | undefined, p: Palette): string[] {
  if (!result?.isError) return [];
  const lines = sanitize(result.text).trim().split("\n");
  const out = lines.slice(0, ERROR_LINES).map((line) => body(p, p.red(line)));
  if (lines.length > ERROR_LINES) out.push(body(p, p.dim(`… ${lines.length - ERROR_LINES} more lines`)));
  return out;
}

function countOf(kinds: { kind: string }[]): string {
  const added = kinds.filter((k) => k.kind === "+").length;
  const removed = kinds.filter((k) => k.kind === "-").length;
  return `+${added} -${removed}`;
}

type DiffKind = { kind: string; text: string };

/** What an edit, write or apply_patch call changes, from its arguments: the files and the diff lines. */
export type FileChange = { files: string[]; lines: DiffKind[]; allOccurrences?: boolean; written?: number };

/** The change a file tool's arguments describe (the web dashboard draws the same); undefined for other tools. */
export function fileChangeOf(name: string, args: Args, raw: string): FileChange | undefined {
  if (name === "edit" || name === "multi_edit") {
    const edits = Array.isArray(args.edits) ? (args.edits as unknown[]) : [args];
    const lines = edits.flatMap((edit, index) => {
      const e = edit !== null && typeof edit === "object" ? (edit as Args) : {};
      const diff = lineDiff(str(e.old_string) ?? "", str(e.new_string) ?? "");
      return index > 0 ? [{ kind: "@", text: "…" }, ...diff] : diff;
    });
    const files = [sanitize(str(args.file_path) ?? str(args.path) ?? "?")];
    return { files, lines, allOccurrences: args.replace_all === true };
  }
  if (name === "write") {
    const content = str(args.content) ?? "";
    const written = content === "" ? [] : content.replace(/\n$/, "").split("\n");
    const files = [sanitize(str(args.file_path) ?? str(args.path) ?? "?")];
    return { files, lines: written.map((text) => ({ kind: "+", text })), written: written.length };
  }
  if (name === "apply_patch") return patchChange(args, raw);
  return undefined;
}

function patchChange(args: Args, raw: string): FileChange {
  const patch =
    str(args.patch) ?? str(args.input) ?? str(args.diff) ?? (Object.keys(args).length === 0 ? raw : "");
  const lines: DiffKind[] = [];
  const files: string[] = [];
  for (const line of patch.split("\n")) {
    const file = /^(?:\+\+\+ (?:b\/)?|\*\*\* (?:Update|Add|Delete) File: )(.+)$/.exec(line);
    if (file) {
      files.push(sanitize(file[1]!.trim()));
      continue;
    }
    if (
      line.startsWith("--- ") ||
      line.startsWith("*** ") ||
      line.startsWith("diff ") ||
      line.startsWith("index ")
    )
      continue;
    if (line.startsWith("@@")) lines.push({ kind: "@", text: line });
    else if (line.startsWith("+") || line.startsWith("-"))
      lines.push({ kind: line[0]!, text: line.slice(1) });
    else if (line.startsWith(" ")) lines.push({ kind: " ", text: line.slice(1) });
  }
  return { files, lines };
}

function fileCard(name: string, change: FileChange, result: Result | undefined, p: Palette): string[] {
  const files = change.files.join(", ") || "?";
  const count =
    change.written !== undefined
      ? `${change.written} line${change.written === 1 ? "" : "s"}`
      : countOf(change.lines);
  const all = change.allOccurrences ? p.dim(" (all occurrences)") : "";
  const header = `${mark(result, p)} ${p.bold(name)} ${files} ${p.dim(count)}${all}`;
  if (result?.isError) return [header, ...errorLines(result, p)];
  return [header, ...diffLines(change.lines, p)];
}

// --- todos ---

export type TodoItem = { text: string; state: "done" | "doing" | "pending" };

/** The checklist a todo tool's arguments carry (P1); undefined when they carry none. */
export function todoItemsOf(args: Args): TodoItem[] | undefined {
  const list = Array.isArray(args.todos) ? args.todos : Array.isArray(args.plan) ? args.plan : undefined;
  if (!list) return undefined;
  return (list as unknown[]).map((item) => {
    const entry = item !== null && typeof item === "object" ? (item as Args) : {};
    const text = sanitize(str(entry.content) ?? str(entry.step) ?? str(entry.title) ?? "?");
    const status = str(entry.status);
    const state =
      status === "completed" || status === "done" ? "done" : status === "in_progress" ? "doing" : "pending";
    return { text, state };
  });
}

function todoCard(name: string, args: Args, result: Result | undefined, p: Palette): string[] | undefined {
  const items = todoItemsOf(args);
  if (!items) return undefined;
  const lines = [`${mark(result, p)} ${p.bold(name)}`];
  if (result?.isError) return [...lines, ...errorLines(result, p)];
  for (const { text, state } of items) {
    if (state === "done") lines.push(body(p, p.dim(`${p.green("[x]")} ${text}`)));
    else if (state === "doing") lines.push(body(p, `${p.yellow("[~]")} ${p.bold(text)}`));
    else lines.push(body(p, `[ ] ${text}`));
  }
  return lines;
}

// --- anything else ---

/** The arguments in a few words: the values of the common keys first, else `key=value` pairs. */
export function argumentSummary(args: Args, raw: string): string {
  const keys = Object.keys(args);
  if (keys.length === 0) return sanitize(raw.replace(/\s+/g, " ").trim()).slice(0, 200);
  const preferred = ["file_path", "path", "pattern", "query", "url", "command", "prompt", "task", "name"];
  const lead = preferred.filter((key) => typeof args[key] === "string").map((key) => String(args[key]));
  const rest = keys
    .filter((key) => !preferred.includes(key) || typeof args[key] !== "string")
    .map((key) => `${key}=${short(args[key])}`);
  return sanitize([...lead, ...rest].join(" ").replace(/\s+/g, " ")).slice(0, 200);
}

function short(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 39)}…` : value);
  if (Array.isArray(value)) return `[${value.length}]`;
  if (value !== null && typeof value === "object") return "{…}";
  return String(value);
}

function genericCard(
  name: string,
  args: Args,
  raw: string,
  result: Result | undefined,
  p: Palette,
): string[] {
  const header = `${mark(result, p)} ${p.bold(name)} ${p.dim(argumentSummary(args, raw))}`.trimEnd();
  if (!result) return [header];
  if (result.isError) return [header, ...errorLines(result, p)];
  const lines = sanitize(result.text).trimEnd().split("\n");
  const first = lines[0]!.trim();
  const summary = lines.length > 1 ? `${lines.length} lines` : first;
  return summary ? [header, body(p, p.dim(summary))] : [header];
}
