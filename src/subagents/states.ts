/** The Hermes subagent lifecycle states (seed 000 subagent-lifecycle-api.md), and which of them are final. */
export const LIFECYCLE_STATES = [
  "PENDING",
  "STARTING",
  "RUNNING",
  "SUCCEEDED",
  "FAILED",
  "INTERRUPTED",
  "CANCEL_REQUESTED",
  "CANCELLED",
  "UNKNOWN",
] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

export const TERMINAL_STATES: ReadonlySet<LifecycleState> = new Set([
  "SUCCEEDED",
  "FAILED",
  "INTERRUPTED",
  "CANCELLED",
]);
