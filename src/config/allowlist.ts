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
    if (current.items.some((item) => String((item as { value?: unknown }).value ?? item) === key)) return;
    current.add(key);
  } else {
    document.set("command_allowlist", document.createNode([key]));
  }
  writeFileSync(path, document.toString(), { mode: 0o600 });
}
