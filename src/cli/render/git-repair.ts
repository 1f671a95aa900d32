/**
 * The line `bdsh run` and `bdsh chat` print for a `sandbox/git-repaired` event: what was
 * taken out of git's control files after a command, and where the original is kept. Paths come from the
 * workspace, which the model writes: they pass the sanitiser.
 */
import type { EventDataMap } from "../../log/events.js";
import { sanitize } from "./style.js";

export function gitRepairLines(data: EventDataMap["sandbox/git-repaired"]): string[] {
  return data.repairs.map((repair) => {
    const settings = repair.settings.length > 0 ? ` ${repair.settings.join(", ")}` : "";
    const what =
      repair.action === "settings-removed"
        ? `removed${settings} from ${repair.path}`
        : `moved ${repair.path} aside${settings ? ` (${settings.trim()})` : ""}`;
    return sanitize(`sandbox: git would have run a program: ${what}; original kept at ${repair.quarantine}`);
  });
}
