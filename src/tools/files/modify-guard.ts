/**
 * The checks `write` and `edit` share before touching a file (T11, T17, C18): sandbox on the real path
 * (hard links included: hard-links.ts), then read-before-write against the agent's file observations.
 *
 * Texts: `cannot modify "<p>": file has not been read — read the file, then retry` and
 * `cannot <write|edit> "<p>": file changed since it was read — re-read the file, then retry`.
 */
import type { ToolExec } from "../types.js";
import { hardLinkDenial } from "./hard-links.js";
import { absolutePath, realPathOf, writeDenial } from "./sandbox-paths.js";

export type ModifyTarget = { shown: string; real: string; exists: boolean };

export async function guardModification(
  exec: ToolExec,
  filePath: string,
  verb: "write" | "edit",
): Promise<ModifyTarget> {
  const shown = absolutePath(exec, filePath);
  const real = await realPathOf(shown);
  const denial = (await writeDenial(exec, shown, real)) ?? (await hardLinkDenial(exec, shown, real));
  if (denial) throw new Error(denial);
  const observations = exec.services.require("fileObservations");
  const state = await observations.check(real);
  if (state === "missing") return { shown, real, exists: false };
  if (state === "unread")
    throw new Error(`cannot modify "${shown}": file has not been read — read the file, then retry`);
  if (state === "stale") {
    throw new Error(
      `cannot ${verb} "${shown}": file changed since it was read — re-read the file, then retry`,
    );
  }
  return { shown, real, exists: true };
}
