/**
 * Finding a program on PATH without running it: the pure probe that `available()` and the player sink use
 * (seed 000: "available() is a pure probe, never install anything").
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

export function findBinary(
  name: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      if (statSync(path).isFile()) return path;
    } catch {
      // not here
    }
  }
  return undefined;
}
