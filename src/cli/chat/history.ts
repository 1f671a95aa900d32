/**
 * The chat's input history, per project (it survives a restart).
 *
 * Invariants:
 * - Kept under `$BDSH_HOME/history/`, one JSON Lines file per workspace (named by a hash of its path),
 *   never in the workspace: a model that writes the workspace cannot plant lines the user would send
 *   again with an arrow key (model output is untrusted).
 * - Files are created 0600 in a 0700 directory; an unreadable or corrupt file is an empty history, and
 *   a line that is not a JSON string is skipped.
 * - The same entry twice in a row is kept once; at most `MAX_ENTRIES` are kept (the file is rewritten
 *   when it grows past twice that).
 * - Navigation keeps the unsent draft: up from a draft and back down restores it.
 */
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const MAX_ENTRIES = 1000;

export function historyFile(home: string, workspace: string): string {
  const name = createHash("sha256").update(workspace).digest("hex").slice(0, 24);
  return join(home, "history", `${name}.jsonl`);
}

export class InputHistory {
  private entries: string[];
  private lines: number;
  /** Index into `entries` while navigating; `entries.length` means the draft. */
  private position: number;
  private draft = "";

  constructor(private readonly file: string | undefined) {
    this.entries = file ? readEntries(file) : [];
    this.lines = this.entries.length;
    this.entries = this.entries.slice(-MAX_ENTRIES);
    this.position = this.entries.length;
  }

  get all(): readonly string[] {
    return this.entries;
  }

  add(entry: string): void {
    this.position = this.entries.length;
    this.draft = "";
    if (entry.trim() === "" || this.entries.at(-1) === entry) {
      this.position = this.entries.length;
      return;
    }
    this.entries.push(entry);
    if (this.entries.length > MAX_ENTRIES) this.entries.shift();
    this.position = this.entries.length;
    if (!this.file) return;
    try {
      mkdirSync(join(this.file, ".."), { recursive: true, mode: 0o700 });
      if (this.lines + 1 > 2 * MAX_ENTRIES) {
        writeFileSync(this.file, this.entries.map((e) => `${JSON.stringify(e)}\n`).join(""), { mode: 0o600 });
        this.lines = this.entries.length;
      } else {
        appendFileSync(this.file, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
        this.lines++;
      }
    } catch {
      // History is a convenience: a full disk or a read-only home never stops the chat.
    }
  }

  /** The entry before the current one (`current` is the editor's text, kept as the draft). */
  previous(current: string): string | undefined {
    if (this.position === 0) return undefined;
    if (this.position === this.entries.length) this.draft = current;
    this.position--;
    return this.entries[this.position];
  }

  /** The entry after the current one, or the draft past the newest. */
  next(): string | undefined {
    if (this.position >= this.entries.length) return undefined;
    this.position++;
    return this.position === this.entries.length ? this.draft : this.entries[this.position];
  }

  /** Leaves navigation (the editor's text was edited or sent). */
  reset(): void {
    this.position = this.entries.length;
  }
}

function readEntries(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const entries: string[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === "string" && entries.at(-1) !== value) entries.push(value);
    } catch {
      // a torn last line (a crash mid-append) or a corrupt one: skipped
    }
  }
  return entries;
}
