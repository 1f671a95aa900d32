/**
 * "Allow this exact command in this project from now on": the narrow "always" answer to a dangerous-command
 * prompt (the broad one, a pattern key in `command_allowlist`, is Hermes's "allow permanently", seed 000).
 *
 * Stored in `$BDSH_HOME/approvals.json` (mode 0600), outside every workspace, so nothing a command or the
 * model writes in a project can add to it (`$BDSH_HOME` is masked from commands and file tools).
 *
 * Invariants:
 * - An entry is keyed by the project (the workspace root's real path) and the normalised command. A
 *   command is normalised only by trimming the whitespace around it and writing line ends as LF: any other
 *   difference (another path, another flag, other spacing inside) is another command and asks again.
 * - A file that cannot be read as approvals allows nothing and is never overwritten: `add` and `revoke`
 *   refuse with the file named, so a person's stored choices are not lost to a bad edit.
 * - Writes go to a temporary file renamed over the old one: a reader never sees half a file.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError } from "./load.js";

export const COMMAND_APPROVALS_FILE = "approvals.json";

export type CommandApproval = {
  /** 8 hex digits naming the entry (`bdsh approvals revoke ID`). */
  id: string;
  /** The workspace root's real path. */
  project: string;
  /** The normalised command. */
  command: string;
  /** The dangerous-pattern keys the command matched when it was approved. */
  keys: string[];
  /** ISO-8601 UTC. */
  addedAt: string;
};

type ApprovalsFile = { version: 1; commands: CommandApproval[] };

export function normaliseCommand(command: string): string {
  return command.replace(/\r\n?/g, "\n").trim();
}

/** The project an approval belongs to: the workspace root's real path (a symlinked path is the same one). */
export function projectOf(workspace: string): string {
  try {
    return realpathSync(workspace);
  } catch {
    return resolve(workspace);
  }
}

export function approvalId(project: string, command: string): string {
  return createHash("sha256").update(`${project}\0${command}`).digest("hex").slice(0, 8);
}

export class CommandApprovals {
  readonly path: string;

  constructor(private readonly home: string) {
    this.path = join(home, COMMAND_APPROVALS_FILE);
  }

  /** Every stored approval, oldest first. A file that is not approvals is a ConfigError. */
  list(): CommandApproval[] {
    return this.read().commands;
  }

  /** Whether `command` was approved for `workspace`'s project. A bad file allows nothing. */
  allows(workspace: string, command: string): boolean {
    let commands: CommandApproval[];
    try {
      commands = this.list();
    } catch {
      return false;
    }
    const project = projectOf(workspace);
    const normalised = normaliseCommand(command);
    return commands.some((entry) => entry.project === project && entry.command === normalised);
  }

  add(workspace: string, command: string, keys: readonly string[], now = new Date()): CommandApproval {
    const file = this.read();
    const project = projectOf(workspace);
    const normalised = normaliseCommand(command);
    const existing = file.commands.find((e) => e.project === project && e.command === normalised);
    if (existing) return existing;
    const entry: CommandApproval = {
      id: approvalId(project, normalised),
      project,
      command: normalised,
      keys: [...keys],
      addedAt: now.toISOString(),
    };
    this.write({ version: 1, commands: [...file.commands, entry] });
    return entry;
  }

  /** Removes the entry `id` names (a unique prefix is enough); undefined when none does. */
  revoke(id: string): CommandApproval | undefined {
    const file = this.read();
    const matches = file.commands.filter((e) => e.id.startsWith(id.toLowerCase()));
    if (matches.length !== 1) return undefined;
    const [gone] = matches;
    this.write({ version: 1, commands: file.commands.filter((e) => e !== gone) });
    return gone;
  }

  private read(): ApprovalsFile {
    if (!existsSync(this.path)) return { version: 1, commands: [] };
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(this.path, "utf8"));
    } catch (error) {
      throw new ConfigError(
        "",
        this.path,
        `is not valid JSON (${(error as Error).message}); fix or remove it`,
      );
    }
    if (!isApprovalsFile(parsed))
      throw new ConfigError("", this.path, "is not a bdsh approvals file; fix or remove it");
    return parsed;
  }

  private write(file: ApprovalsFile): void {
    mkdirSync(this.home, { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, this.path);
  }
}

function isApprovalsFile(value: unknown): value is ApprovalsFile {
  if (typeof value !== "object" || value === null) return false;
  const { version, commands } = value as { version?: unknown; commands?: unknown };
  return (
    version === 1 &&
    Array.isArray(commands) &&
    commands.every(
      (e) =>
        typeof e === "object" &&
        e !== null &&
        typeof e.id === "string" &&
        typeof e.project === "string" &&
        typeof e.command === "string" &&
        Array.isArray(e.keys) &&
        typeof e.addedAt === "string",
    )
  );
}
