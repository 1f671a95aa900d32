/**
 * What a tool call did, as data: stored on `tool/result.details` beside the model-visible text.
 *
 * The model sees only `text` (the seed's result strings stay exact); `details` is for people and their views
 * (run, chat, the dashboard, the transcript projection in src/transcript/), so no view reads a tool's text or
 * arguments to find an exit code, a diff or a todo list again.
 *
 * Invariants:
 * - Written by the tool that ran (or its pipeline wrapper), never derived from the text afterwards.
 * - Bounded: a diff is cut to MAX_DETAIL_DIFF_LINES lines (and says so); lists are cut to their tool's own
 *   limits. Details go through the same redactor as the text before they are stored.
 * - A view must accept any shape (old logs have none; a newer writer may add kinds): unknown kinds are shown
 *   as a generic card, never an error.
 */

/** Diff lines kept in `file-change` details; the rest is counted in `omittedLines`. */
export const MAX_DETAIL_DIFF_LINES = 400;
/** Characters kept of one diff line (a minified file's single line must not fill the event). */
export const MAX_DETAIL_LINE_CHARS = 300;

export type DiffLine = { kind: "+" | "-" | " " | "@"; text: string };

export type TodoDetail = { content: string; status: "pending" | "in_progress" | "completed" };

export type ToolDetails =
  /** bash (T7, T8): how the command ended. `exitCode` absent while still running (moved to a job). */
  | {
      kind: "command";
      exitCode?: number;
      signal?: string;
      timedOut?: boolean;
      /** T8: the output was cut; the full output is at `fullOutput` (a path or job locator). */
      truncated: boolean;
      fullOutput?: string;
      /** The command was moved to the background (T9) as this job. */
      jobId?: string;
      /** The backend lost the command, or the call was aborted: the outcome is unknown (no exit code). */
      stopped?: string;
      /** The sandbox refused a file or network access (the text's `[sandbox: …]` marker). */
      sandboxDenied?: boolean;
    }
  /**
   * edit, write, apply_patch: one file's change, from the file's content before and after the call (never
   * from the arguments). `diff` is unified-diff hunks: an `@` line (`@@ -a,b +c,d @@`), then context and
   * changed lines; a created file is all `+`. `added`/`removed` count every changed line, shown or not.
   */
  | {
      kind: "file-change";
      path: string;
      change: "created" | "modified" | "deleted";
      added: number;
      removed: number;
      diff: DiffLine[];
      /** Diff lines beyond MAX_DETAIL_DIFF_LINES, not stored. */
      omittedLines?: number;
      /** The old content was not text (a NUL byte): no diff, and `removed` is 0. */
      binary?: boolean;
      /** edit with replace_all: how many occurrences were replaced. */
      replacements?: number;
    }
  /**
   * read (T10): the lines shown (1-based, inclusive; `endLine` < `startLine` when none were) and how many
   * lines the file has. `path` is the file, or the `spill://` locator read.
   */
  | { kind: "read"; path: string; startLine: number; endLine: number; totalLines: number }
  /** read_image: the image attached to the result. */
  | { kind: "image"; path: string; mimeType: string; bytes: number }
  /**
   * grep, glob: what was searched and how much came back. `matches` counts every match (lines for grep,
   * paths for glob), `files` the distinct files grep matched in; `truncated` when the model saw only the
   * first ones.
   */
  | { kind: "search"; pattern: string; matches: number; files?: number; truncated: boolean }
  /** todo_write (P1): the whole list after the call. */
  | { kind: "todos"; items: TodoDetail[] }
  /**
   * subagent, subagent_fork, send_message, interrupt_agent: the agent the call is about (a child; for
   * send_message it may be the parent). `mode` only on a launch.
   */
  | { kind: "subagent"; childId: string; mode?: "spawn" | "fork" }
  /** An MCP tool (T21): which server and which of its tools. */
  | { kind: "mcp"; server: string; tool: string }
  /** web_fetch: the address fetched (after redirects), the answer's status, the body's UTF-8 size. */
  | { kind: "fetch"; url: string; status: number; bytes: number; truncated: boolean }
  /** web_search (T19): the queries and how many results. */
  | { kind: "web-search"; queries: string[]; results: { title: string; url: string }[] }
  /** present (T22): deliverable files, workspace-relative. */
  | { kind: "files"; files: { path: string; bytes: number; mimeType: string }[] }
  /** job_output, job_kill (T9): the job and its state after the call (`running`, `completed`, `failed`, …). */
  | { kind: "job"; jobId: string; status?: string; exitCode?: number };

/** The details of one kind. */
export type ToolDetailsOf<K extends ToolDetails["kind"]> = Extract<ToolDetails, { kind: K }>;

export type ToolDetailsKind = ToolDetails["kind"];

/** `details` read back from a stored event: a known kind, or undefined (absent, or a shape we don't know). */
export function toolDetailsOf(value: unknown): ToolDetails | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const kind = (value as { kind?: unknown }).kind;
  return typeof kind === "string" && DETAIL_KINDS.has(kind) ? (value as ToolDetails) : undefined;
}

const DETAIL_KINDS = new Set<string>([
  "command",
  "file-change",
  "read",
  "image",
  "search",
  "todos",
  "subagent",
  "mcp",
  "fetch",
  "web-search",
  "files",
  "job",
] satisfies ToolDetailsKind[]);
