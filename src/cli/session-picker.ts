/**
 * `bdsh resume` without an id: this workspace's sessions, last active first (the order `--continue` and
 * `sessions list` use), numbered on stderr; the person types a number (Enter takes the first). Only at a
 * terminal: without one there is nobody to pick, and the caller says to give an id.
 */
import { createInterface } from "node:readline/promises";
import type { SessionRow, Store } from "../store/store.js";
import { CliError, EXIT_USAGE } from "./errors.js";
import type { Output } from "./output.js";
import { sanitize } from "./render/terminal-text.js";
import { shortId } from "./short-id.js";

const SHOWN = 10;

/** One session in a list: short id, last activity, title. */
export function sessionLine(row: SessionRow): string {
  const when = row.updatedAt.replace("T", " ").slice(0, 16);
  const title = sanitize(row.title ?? "(untitled)").replace(/\n/g, " ");
  return `${shortId(row.id)}  ${when}  ${title.slice(0, 60)}`;
}

/** One picker line: number, then the session's line. */
export function pickerLine(index: number, row: SessionRow): string {
  return `  ${String(index + 1).padStart(2)}. ${sessionLine(row)}`;
}

/**
 * The sessions a person can resume in `workspace` (main sessions and forks, not subagents), last active
 * first: the order `--continue` picks by and `sessions list` shows.
 */
export async function resumableSessions(
  store: Store,
  workspace: string,
  shown = SHOWN,
): Promise<SessionRow[]> {
  const rows = await store.listSessions({ workspace, order: "activity", limit: 200 });
  return rows.filter((row) => row.kind === "main" || row.kind === "fork").slice(0, shown);
}

/** The row `typed` picks among `rows`: a number (empty: the first); undefined for anything else. */
export function pickedRow(typed: string, rows: readonly SessionRow[]): SessionRow | undefined {
  const text = typed.trim();
  if (text === "") return rows[0];
  return /^\d+$/.test(text) ? rows[Number(text) - 1] : undefined;
}

export async function pickSession(store: Store, workspace: string, output: Output): Promise<SessionRow> {
  const rows = await resumableSessions(store, workspace);
  if (rows.length === 0)
    throw new CliError(
      "NOT_FOUND",
      `no session to resume in ${workspace}; start one with \`bdsh\``,
      EXIT_USAGE,
    );
  output.err(`sessions in ${sanitize(workspace)}, last active first:`);
  for (const [i, row] of rows.entries()) output.err(pickerLine(i, row));
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  let typed: string;
  try {
    typed = await rl.question(`resume which? [1-${rows.length}, Enter: 1] `);
  } finally {
    rl.close();
  }
  const row = pickedRow(typed, rows);
  if (!row) throw new CliError("USAGE", `no session numbered ${sanitize(typed.trim())}`, EXIT_USAGE);
  return row;
}
