/**
 * Node's on-disk compile cache for the `bdsh` binary (`module.enableCompileCache`, Node 22.1 and later; a
 * no-op on Node 20): V8's compiled code for the bundle is kept between runs, which takes 12-19 % off the
 * CPU of every start on Node 24 once warm (bench/suite/cli-start.ts).
 *
 * The cache is code the next `bdsh` runs, so it lives where the model cannot write: under `$BDSH_HOME`,
 * which the sandbox hides (tools/terminal/bubblewrap.ts), private (0700). Not Node's default, a folder
 * under the shared temp directory, where another user or a sandboxed command could plant entries. It is
 * used only when `$BDSH_HOME` already exists, so `bdsh --version` never creates the home (the store
 * creates it private on first use). `NODE_DISABLE_COMPILE_CACHE=1` turns it off, as for any Node program.
 */
import { existsSync, mkdirSync } from "node:fs";
import module from "node:module";
import { join } from "node:path";
import { bdshHome } from "../config/paths.js";

/** Where the cache is kept, under a home. */
export function compileCacheDir(home: string): string {
  return join(home, "cache", "node-compile");
}

type EnableCompileCache = (directory?: string) => unknown;

export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  const enable = (module as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  const home = bdshHome(env);
  if (enable === undefined || !existsSync(home)) return;
  try {
    const dir = compileCacheDir(home);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    enable(dir);
  } catch {
    // A cache that cannot be written only costs speed: start without it.
  }
}
