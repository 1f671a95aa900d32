/**
 * Whether `dist/` is the build of the sources as they are: the suite's global setup rebuilds when it is not,
 * and the serve benches refuse to measure a stale build (bench/serve/built-server.ts).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** `dist/cli/main.js` exists under `root` and is newer than every file under `src/` and `web/`. */
export function buildIsCurrent(root: string): boolean {
  const built = join(root, "dist/cli/main.js");
  if (!existsSync(built)) return false;
  return statSync(built).mtimeMs >= Math.max(newestMtime(join(root, "src")), newestMtime(join(root, "web")));
}
