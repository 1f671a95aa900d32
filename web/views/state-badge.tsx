/**
 * A session's state as a badge: words first (colour is never the only sign), an icon for the states that
 * ask for attention. `waiting` reads "needs you" with what it waits for.
 */
import { Icon, type IconName } from "../icons.js";

const ICONS: Record<string, IconName | undefined> = {
  waiting: "hand",
  errored: "alert",
  aborted: "stop",
};

export function StateBadge({ state, waitingFor }: { state: string; waitingFor?: string[] | undefined }) {
  const label =
    state === "waiting"
      ? `needs you${waitingFor?.length ? `: ${waitingFor.map((w) => (w === "approval" ? "approval" : "answer")).join(", ")}` : ""}`
      : state;
  const icon = ICONS[state];
  return (
    <span class={`status ${state}`} data-testid="session-status" data-state={state}>
      {icon ? <Icon name={icon} /> : null}
      {label}
    </span>
  );
}
