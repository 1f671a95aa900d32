/**
 * A path the model names that must lie in the session's workspace (`present`, `working_directory`): the
 * same resolution as `read` (sandbox-paths.ts), then a containment check on the real path.
 *
 * Invariants:
 * - Resolved against the call's cwd, `..` collapsed, every symlink resolved: neither leads out of the
 *   workspace's real path.
 * - The harness's own directory (masked-paths.ts) is refused even where it lies inside the workspace.
 * - The refusal says why in words the model can act on; `shown` is the absolute path as the model named it.
 */

import type { ToolExec } from "../types.js";
import { isMasked, maskedRealPaths } from "./masked-paths.js";
import { isWithin } from "./path-within.js";
import { absolutePath, realPathOf } from "./sandbox-paths.js";

export type WorkspacePath =
  | { ok: true; shown: string; real: string; root: string }
  | { ok: false; shown: string; refusal: string };

export async function workspacePath(exec: ToolExec, path: string): Promise<WorkspacePath> {
  const shown = absolutePath(exec, path);
  const real = await realPathOf(shown);
  if (isMasked(await maskedRealPaths(exec), real))
    return { ok: false, shown, refusal: "the harness's home folder is not available to tools" };
  const root = await realPathOf(exec.workspace);
  if (!isWithin(root, real))
    return { ok: false, shown, refusal: `outside the workspace ${JSON.stringify(exec.workspace)}` };
  return { ok: true, shown, real, root };
}
