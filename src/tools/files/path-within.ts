/** Whether `path` is `root` or lies under it. Both must already be resolved (real paths where it matters). */
import { isAbsolute, relative, sep } from "node:path";

export function isWithin(root: string, path: string): boolean {
  const inside = relative(root, path);
  return inside === "" || (inside.split(sep)[0] !== ".." && !isAbsolute(inside));
}
