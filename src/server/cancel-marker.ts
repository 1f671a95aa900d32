/**
 * The cross-server cancel request (L7 from any server): an inert inbox row (`mode: inject`, so it never
 * opens a turn) that the driving server's runner turns into `agent.cancel()`, which discards it along with
 * the rest of the pending inbox. Its text is honest should a step splice it first.
 */
import type { InboxItem, NewInboxItem } from "../store/store.js";

export const CANCEL_MARKER: NewInboxItem = {
  queue: "next-step",
  mode: "inject",
  source: "human",
  text: "The user cancelled the running turn. Stop what you are doing.",
  metadata: { control: "cancel" },
};

export function isCancelMarker(item: InboxItem): boolean {
  return item.metadata.control === "cancel";
}
