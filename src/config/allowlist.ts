/**
 * "Allow permanently" for a dangerous-command pattern (Hermes): the pattern key is added to
 * `command_allowlist` in `$BDSH_HOME/config.yaml`, keeping the rest of the file (comments included).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isSeq, parseDocument, stringify } from "yaml";

export function addToCommandAllowlist(home: string, key: string): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const path = join(home, "config.yaml");
  const document = parseDocument(existsSync(path) ? readFileSync(path, "utf8") : "");
  if (document.contents === null) {
    writeFileSync(path, stringify({ command_allowlist: [key] }), { mode: 0o600 });
    return;
  }
  const current = document.get("command_allowlist");
  if (isSeq(current)) {
    if (current.items.some((item) => itemText(item) === key)) return;
    current.add(key);
  } else {
    document.set("command_allowlist", document.createNode([key]));
  }
  writeFileSync(path, document.toString(), { mode: 0o600 });
}

/** The pattern keys in `$BDSH_HOME/config.yaml`'s `command_allowlist` (every project, permanently). */
export function readCommandAllowlist(home: string): string[] {
  const path = join(home, "config.yaml");
  if (!existsSync(path)) return [];
  const current = parseDocument(readFileSync(path, "utf8")).get("command_allowlist");
  return isSeq(current) ? current.items.map(itemText) : [];
}

/** Removes `key` from `command_allowlist`, keeping the rest of the file; false when it was not there. */
export function removeFromCommandAllowlist(home: string, key: string): boolean {
  const path = join(home, "config.yaml");
  if (!existsSync(path)) return false;
  const document = parseDocument(readFileSync(path, "utf8"));
  const current = document.get("command_allowlist");
  if (!isSeq(current)) return false;
  const index = current.items.findIndex((item) => itemText(item) === key);
  if (index < 0) return false;
  current.items.splice(index, 1);
  writeFileSync(path, document.toString(), { mode: 0o600 });
  return true;
}

function itemText(item: unknown): string {
  return String((item as { value?: unknown }).value ?? item);
}
