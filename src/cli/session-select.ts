/**
 * Which session a command means. Every command that takes a session id goes through here:
 * `run`/`chat --session`, `--continue`/`--last`, `sessions show|events|resume|fork|archive` and `compact`.
 *
 * - An id may be shortened to any unique prefix; an exact id always wins (store/session-ids.ts). An
 *   ambiguous prefix names up to 5 candidates; an unknown one says so. Nothing is guessed.
 * - `--continue` (`--last`) is the most recently updated, non-archived session of this workspace.
 * - A session keeps its own workspace: continuing it from another directory says which one is used. An
 *   explicit `--cwd` wins, and that is said too.
 * - An archived session is refused before anything is sent, with the command that restores it (L18).
 */
import { existsSync } from "node:fs";
import { archivedSessionMessage } from "../guards/archived-session.js";
import type { LogEvent } from "../log/events.js";
import type { Agent } from "../loop/agent.js";
import { AmbiguousSessionIdError } from "../store/session-ids.js";
import { SessionNotFoundError, type SessionRow, type Store } from "../store/store.js";
import { CliError, EXIT_FAILED, EXIT_USAGE, usageError } from "./errors.js";
import type { Output } from "./output.js";
import { sanitize } from "./render/terminal-text.js";
import type { SessionFlags } from "./shared-options.js";
import { idsForTypedRef, isShortId } from "./short-id.js";

/** The session `ref` (an id, a unique prefix of one, or a short id) names; a `CliError` otherwise. */
export async function findSession(store: Store, ref: string, exitCode = EXIT_FAILED): Promise<SessionRow> {
  let id: string;
  try {
    // A short id is looked for among every id's end and start alike: it never silently means another
    // session whose id merely starts with the same digits.
    id = isShortId(ref) ? await typedId(store, ref, exitCode) : await store.resolveSessionId(ref);
  } catch (error) {
    if (error instanceof CliError) throw error;
    if (error instanceof SessionNotFoundError) id = await typedId(store, ref, exitCode);
    else throw explained(error, exitCode);
  }
  const row = await store.getSession(id);
  if (!row) throw new CliError("NOT_FOUND", `no session ${ref} in ${store.location}`, exitCode);
  return row;
}

/** The one id a short id or an undashed prefix names (short-id.ts); NOT_FOUND or AMBIGUOUS otherwise. */
async function typedId(store: Store, ref: string, exitCode: number): Promise<string> {
  const ids = await idsForTypedRef(store, ref);
  if (ids.length === 1) return ids[0]!;
  if (ids.length === 0) throw new CliError("NOT_FOUND", `no session ${ref} in ${store.location}`, exitCode);
  throw new CliError(
    "AMBIGUOUS",
    `session id ${ref} is ambiguous: ${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", …" : ""}; give more of the id`,
    exitCode,
  );
}

function explained(error: unknown, exitCode: number): unknown {
  if (error instanceof AmbiguousSessionIdError)
    return new CliError(
      "AMBIGUOUS",
      `${error.message}; give more of the id (\`bdsh sessions list --all\` shows them)`,
      exitCode,
    );
  if (error instanceof Error && "code" in error && error.code === "INVALID_INPUT")
    return usageError("a session id cannot be empty");
  return error;
}

/** L18: an archived session is refused with the way back, instead of a turn that ends blocked. */
export function refuseArchived(row: SessionRow): void {
  if (row.archived) throw new CliError("ARCHIVED", archivedSessionMessage(row.id), EXIT_FAILED);
}

/** The workspace a session recorded when it began (new-session.ts), if any. */
export function workspaceOf(row: SessionRow): string | undefined {
  const workspace = row.metadata.workspace;
  return typeof workspace === "string" ? workspace : undefined;
}

export type ChosenSession = {
  /** Undefined: start a new session. */
  row?: SessionRow;
  /** The workspace to run in: the session's own unless `--cwd` was given. */
  workspace: string;
};

/**
 * `run` and `chat`: the session the flags name (`--session PREFIX`, `--continue`, `--last`), or a new one.
 * `cwd` is the resolved current workspace; `flags.cwd` tells whether it was given explicitly.
 */
export async function chooseSession(
  store: Store,
  flags: SessionFlags & { cwd?: string | undefined },
  cwd: string,
  output: Output,
): Promise<ChosenSession> {
  const latest = flags.continue || flags.last;
  if (flags.session && latest)
    throw usageError("--session and --continue/--last name a session each; give one of them");
  let row: SessionRow | undefined;
  if (flags.session) row = await findSession(store, flags.session, EXIT_USAGE);
  else if (latest) {
    row = await store.latestSession({ workspace: cwd });
    if (!row)
      throw new CliError(
        "NOT_FOUND",
        `no session to continue in ${cwd}; start one with \`bdsh run\` or \`bdsh chat\``,
        EXIT_USAGE,
      );
  }
  if (!row) return { workspace: cwd };
  refuseArchived(row);
  return { row, workspace: sessionWorkspace(row, flags.cwd !== undefined, cwd, output) };
}

/**
 * A continued session keeps its workspace (it used to switch silently to the current directory).
 * Says so when that is not the current directory, and when an explicit `--cwd` moves it.
 */
export function sessionWorkspace(row: SessionRow, cwdExplicit: boolean, cwd: string, output: Output): string {
  const own = workspaceOf(row);
  if (own === undefined || own === cwd) return cwd;
  if (cwdExplicit) {
    output.err(`bdsh: session ${row.id} continues in ${cwd} (--cwd), not in its workspace ${own}`);
    return cwd;
  }
  if (!existsSync(own))
    throw usageError(
      `session ${row.id}'s workspace ${own} no longer exists; pass --cwd DIR to continue it elsewhere`,
    );
  output.err(`bdsh: session ${row.id} works in ${own}; using that workspace, not ${cwd}`);
  return own;
}

/** How many lines of each message the tail shows. */
const TAIL_LINES = { user: 3, assistant: 6 };

/** The last user and assistant messages of a log, each cut to a few lines; undefined when it has none. */
export function conversationTail(events: readonly LogEvent[]): string | undefined {
  const user = lastUserText(events);
  const assistant = lastAssistantText(events);
  const lines: string[] = [];
  if (user !== undefined) lines.push(labelled("you", user, TAIL_LINES.user));
  if (assistant !== undefined) lines.push(labelled("assistant", assistant, TAIL_LINES.assistant));
  return lines.length ? lines.join("\n") : undefined;
}

export function lastUserText(events: readonly LogEvent[]): string | undefined {
  const event = events.findLast((e) => e.type === "user/message" && e.data.source === "human");
  return event?.type === "user/message" ? event.data.text : undefined;
}

export function lastAssistantText(events: readonly LogEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type !== "assistant/message") continue;
    const text = event.data.blocks
      .map((b) => (b.type === "text" ? b.text : ""))
      .join("")
      .trim();
    if (text) return text;
  }
  return undefined;
}

/** `text` cut to `max` lines (and 200 characters a line), with a marker when something was cut. */
export function clipLines(text: string, max: number): string {
  const all = text.trim().split("\n");
  const kept = all.slice(0, max).map((line) => (line.length > 200 ? `${line.slice(0, 199)}…` : line));
  if (all.length > max) kept.push(`… (${all.length - max} more lines)`);
  return kept.join("\n");
}

function labelled(label: string, text: string, max: number): string {
  const [first, ...rest] = clipLines(text, max).split("\n");
  return [`${label}: ${first}`, ...rest.map((line) => `  ${line}`)].join("\n");
}

/**
 * Before a continued session runs, its stored history is read (so the live view shows only what
 * happens now, not old tool lines as if they ran again) and the conversation's tail is printed on stderr.
 */
export async function showConversationTail(agent: Agent, output: Output): Promise<void> {
  await agent.log.load();
  const tail = conversationTail(agent.log.events);
  if (tail) output.err(`${sanitize(tail)}\n`);
}
