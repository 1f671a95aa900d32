/**
 * A tool call and its result as a few terminal lines: what ran, and how it went.
 *
 * The body comes from the result's `details` (log/tool-details.ts), what the tool itself recorded, never
 * from its text or its arguments; the arguments only name the call in the header (the command, the path).
 * - command (bash): `$ <command>` with its description, the last lines of output, `exit <n>` in red, the
 *   timeout, signal, background job and sandbox denial as notes.
 * - file-change (edit, write, apply_patch): `+a -r` and the coloured hunks, cut to MAX_DIFF_LINES.
 * - todos (todo_write, P1): a checklist, `[x]` done, `[~]` in progress, `[ ]` pending.
 * - read, search, subagent, job, fetch, web-search, image, mcp, files: one summary line.
 * - no details (an old log, a tool that records none): the generic card, the name, a summary of the
 *   arguments and the result's line count.
 * A finished call that ran for a second or more shows its duration, dimmed. Errors are red. Details and
 * arguments come from the model's actions: any shape is accepted, nothing here throws, and every line is
 * sanitised and cut to `width`.
 */
import { type ToolDetails, type ToolDetailsOf, toolDetailsOf } from "../../log/tool-details.js";
import { formatElapsed } from "../../transcript/elapsed.js";
import { type Args, detailSummary, parseArgs, plural } from "../../transcript/tool-summary.js";
import { type Palette, sanitize, truncate } from "./style.js";

export const OUTPUT_TAIL_LINES = 6;
export const MAX_DIFF_LINES = 24;
const ERROR_LINES = 4;
/** Durations below this are not worth a glance. */
const SHOWN_DURATION_MS = 1_000;

type Call = { name: string; arguments: string };
/** A result as `tool/result` stores it; `details` is read with `toolDetailsOf` (any stored shape). */
export type CardResult = { text: string; isError?: boolean; details?: unknown; durationMs?: number };

export function toolCard(call: Call, result: CardResult | undefined, p: Palette, width: number): string[] {
  let lines: string[];
  try {
    lines = cardLines(call, parseArgs(call.arguments), result, p);
  } catch {
    lines = [`${mark(result, p)} ${p.bold(sanitize(call.name))}`];
  }
  if (result?.durationMs !== undefined && result.durationMs >= SHOWN_DURATION_MS)
    lines[0] = `${lines[0]!} ${p.dim(formatElapsed(result.durationMs))}`;
  return lines.map((line) => truncate(line, Math.max(8, width - 1)));
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

function mark(result: CardResult | undefined, p: Palette, failed = result?.isError === true): string {
  if (result === undefined) return p.yellow("•");
  return failed ? p.red("✗") : p.green("✓");
}

/** Body lines sit under the header behind a dim bar. */
const body = (p: Palette, text: string) => `  ${p.dim("│")} ${text}`;

function cardLines(call: Call, args: Args, result: CardResult | undefined, p: Palette): string[] {
  const name = sanitize(call.name);
  const details = toolDetailsOf(result?.details);
  if (name === "bash" || details?.kind === "command")
    return bashCard(args, result, details?.kind === "command" ? details : undefined, p);
  if (result && details) {
    switch (details.kind) {
      case "file-change":
        return fileCard(name, details, result, p);
      case "todos":
        return todoCard(name, details, result, p);
      default:
        return summaryCard(name, args, call.arguments, result, details, p);
    }
  }
  return genericCard(name, args, call.arguments, result, p);
}

// --- bash ---

/** The text's own status lines (bash-result.ts): the card shows these facts from `details` instead. */
const MARKER =
  /^\[(exit code|timed out after|killed by signal|stopped|still running after|output truncated|sandbox)[^\]]*\]$/;

function bashCard(
  args: Args,
  result: CardResult | undefined,
  details: ToolDetailsOf<"command"> | undefined,
  p: Palette,
): string[] {
  const command = sanitize(str(args.command) ?? "");
  const commandLines = command.split("\n");
  const shown =
    commandLines[0]! + (commandLines.length > 1 ? p.dim(` … (+${commandLines.length - 1} lines)`) : "");
  const description = str(args.description);
  const exit = details?.exitCode;
  const failed = result !== undefined && (result.isError === true || (exit !== undefined && exit !== 0));
  const header = `${mark(result, p, failed)} ${p.bold("$")} ${shown}${description ? p.dim(`  # ${sanitize(description)}`) : ""}`;
  if (!result) return [header];
  const lines = [header];
  const output: string[] = [];
  for (const line of sanitize(result.text).split("\n")) {
    // With details the markers are drawn below; a job's text goes on to say how to follow it, not output.
    if (details && MARKER.test(line)) {
      if (details.jobId !== undefined) break;
      continue;
    }
    if (line !== "[stderr]" && line !== "(no output)") output.push(line);
  }
  while (output.length > 0 && output.at(-1)!.trim() === "") output.pop();
  if (output.length > OUTPUT_TAIL_LINES) {
    lines.push(body(p, p.dim(`… ${output.length - OUTPUT_TAIL_LINES} more lines`)));
  }
  for (const line of output.slice(-OUTPUT_TAIL_LINES))
    lines.push(body(p, result.isError ? p.red(line) : p.dim(line)));
  if (details) lines.push(...commandNotes(details, p).map((note) => body(p, note)));
  if (exit !== undefined && exit !== 0) lines.push(body(p, p.red(p.bold(`exit ${exit}`))));
  return lines;
}

function commandNotes(details: ToolDetailsOf<"command">, p: Palette): string[] {
  const notes: string[] = [];
  if (details.truncated)
    notes.push(p.yellow(`output truncated; full output: ${sanitize(details.fullOutput ?? "unavailable")}`));
  if (details.timedOut) notes.push(p.yellow("timed out"));
  if (details.stopped !== undefined) notes.push(p.yellow(`stopped: ${sanitize(details.stopped)}`));
  if (details.signal !== undefined) notes.push(p.yellow(`killed by signal ${sanitize(details.signal)}`));
  if (details.jobId !== undefined)
    notes.push(p.yellow(`running in the background as job ${sanitize(details.jobId)}`));
  if (details.sandboxDenied) notes.push(p.red("the sandbox denied an access"));
  return notes;
}

// --- diffs ---

function diffLines(details: ToolDetailsOf<"file-change">, p: Palette): string[] {
  const diff = Array.isArray(details.diff) ? details.diff : [];
  const out = diff.slice(0, MAX_DIFF_LINES).map(({ kind, text }) => {
    const shown = sanitize(String(text));
    if (kind === "+") return body(p, p.green(`+ ${shown}`));
    if (kind === "-") return body(p, p.red(`- ${shown}`));
    if (kind === "@") return body(p, p.cyan(shown));
    return body(p, p.dim(`  ${shown}`));
  });
  const more = diff.length - Math.min(diff.length, MAX_DIFF_LINES) + (details.omittedLines ?? 0);
  if (more > 0) out.push(body(p, p.dim(`… ${more} more lines`)));
  return out;
}

function errorLines(result: CardResult | undefined, p: Palette): string[] {
  if (!result?.isError) return [];
  const lines = sanitize(result.text).trim().split("\n");
  const out = lines.slice(0, ERROR_LINES).map((line) => body(p, p.red(line)));
  if (lines.length > ERROR_LINES) out.push(body(p, p.dim(`… ${lines.length - ERROR_LINES} more lines`)));
  return out;
}

function fileCard(
  name: string,
  details: ToolDetailsOf<"file-change">,
  result: CardResult,
  p: Palette,
): string[] {
  const count =
    details.change === "created"
      ? `created, ${plural(details.added, "line")}`
      : details.binary
        ? "replaced a binary file"
        : `+${details.added} -${details.removed}`;
  const all =
    details.replacements !== undefined ? p.dim(` (${plural(details.replacements, "occurrence")})`) : "";
  const header = `${mark(result, p)} ${p.bold(name)} ${sanitize(String(details.path))} ${p.dim(count)}${all}`;
  if (result.isError) return [header, ...errorLines(result, p)];
  return [header, ...diffLines(details, p)];
}

// --- todos ---

function todoCard(name: string, details: ToolDetailsOf<"todos">, result: CardResult, p: Palette): string[] {
  const lines = [`${mark(result, p)} ${p.bold(name)}`];
  if (result.isError) return [...lines, ...errorLines(result, p)];
  for (const item of Array.isArray(details.items) ? details.items : []) {
    const text = sanitize(String(item?.content ?? "?"));
    if (item?.status === "completed") lines.push(body(p, p.dim(`${p.green("[x]")} ${text}`)));
    else if (item?.status === "in_progress") lines.push(body(p, `${p.yellow("[~]")} ${p.bold(text)}`));
    else lines.push(body(p, `[ ] ${text}`));
  }
  return lines;
}

// --- one summary line from details ---

function summaryCard(
  name: string,
  args: Args,
  raw: string,
  result: CardResult,
  details: ToolDetails,
  p: Palette,
): string[] {
  const header = `${mark(result, p)} ${p.bold(name)} ${p.dim(argumentSummary(args, raw))}`.trimEnd();
  if (result.isError) return [header, ...errorLines(result, p)];
  let summary: string;
  try {
    summary = sanitize(detailSummary(details));
  } catch {
    summary = ""; // a stored shape this version does not know
  }
  return summary ? [header, body(p, p.dim(summary))] : [header];
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
  result: CardResult | undefined,
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
