/**
 * The folder of better-dsh's own `package.json`: where the version and the built dashboard are found.
 * Found by walking up from this module, because the module sits at different depths in the sources
 * (`src/config/`), tsc's output (`dist/config/`) and the bundled binary (`dist/cli/` or
 * `dist/cli/chunks/`, scripts/build-cli.mjs).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "better-dsh";

export type PackageInfo = { root: string; version: string };

let found: PackageInfo | undefined;

export function packageInfo(): PackageInfo {
  found ??= search(dirname(fileURLToPath(import.meta.url)));
  return found;
}

function search(start: string): PackageInfo {
  for (let dir = start; ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const json = JSON.parse(readFileSync(file, "utf8")) as { name?: unknown; version?: unknown };
      if (json.name === PACKAGE_NAME) return { root: dir, version: String(json.version) };
    }
    if (dirname(dir) === dir) throw new Error(`no ${PACKAGE_NAME} package.json above ${start}`);
  }
}
