/**
 * The overflow of `glob` and `grep` (T13, C16): the first K items inline, the full list a blob, and
 * `(Showing K of N <unit> Full sorted result stored at: <locator>. Use read with offset/limit, or grep this
 * path to search within it.)`. Without a blob store the notice says `More <unit> were omitted.` (C17).
 */
import { spillLocator } from "../spill/blob-store.js";
import { RETRIEVAL_HINT } from "../spill/spill-policy.js";
import { droppedNotice, SpillQuotaError } from "../spill/spill-quota.js";
import type { ToolExec } from "../types.js";

export async function listWithOverflow(
  exec: ToolExec,
  items: readonly string[],
  shown: number,
  unit: "paths" | "matches",
): Promise<string> {
  if (items.length <= shown) return items.join("\n");
  const head = items.slice(0, shown).join("\n");
  const blobs = exec.services.get("blobs");
  try {
    if (!blobs) throw new Error("no blob store");
    const ref = await blobs.putBlob(exec.session.sessionId, items.join("\n"), {
      kind: `${exec.toolName}-overflow`,
    });
    const dropped = droppedNotice(ref);
    return `${head}\n(Showing ${shown} of ${items.length} ${unit} Full sorted result stored at: ${spillLocator(ref.id)}. ${RETRIEVAL_HINT}${dropped ? ` ${dropped}` : ""})`;
  } catch (error) {
    const why = error instanceof SpillQuotaError ? ` Not stored: ${error.message}.` : "";
    return `${head}\n(Showing ${shown} of ${items.length} ${unit}. More ${unit} were omitted.${why})`;
  }
}
