/**
 * What the store says about a delegated child (S1, Hermes lifecycle API): its delegation record, its
 * lifecycle state and its terminal result, read fresh from the store every time, so any process or server
 * of the store answers the same (beyond Hermes, whose handles live in one process).
 *
 * Invariants:
 * - A child is a session with `parentId` and `metadata.delegation`; nothing about it lives only in memory.
 * - The first `subagent/settled` event of a child is its terminal result: immutable, answered the same on
 *   every call (a later settlement after more work does not change what a handle's result is).
 * - States, exactly: PENDING (created, not started), STARTING (a driver holds it, no turn yet), RUNNING,
 *   CANCEL_REQUESTED (asked, not yet settled), and the terminal SUCCEEDED, FAILED, INTERRUPTED, CANCELLED;
 *   UNKNOWN is only for what cannot be shown (bad handles, missing children).
 * - INTERRUPTED is a turn whose driver died (R1 repair, `interrupted`) or was stopped without a cancel
 *   request; it is never re-run.
 */
import { createHash } from "node:crypto";
import type { LogEvent } from "../log/events.js";
import { childSessions } from "../store/children.js";
import { opensTurn, type SessionDirectory, type SessionRow, sessionLeaseName } from "../store/store.js";

export { LIFECYCLE_STATES, type LifecycleState, TERMINAL_STATES } from "./states.js";

import type { LifecycleState } from "./states.js";

/** Terminal result text bound (Hermes: 32k characters). */
export const MAX_RESULT_CHARS = 32_000;

/**
 * S4: the toolset of `structured_output` alone. A child narrowed with `allowedToolsets` is offered it too
 * when it must report (./service.ts `launch`): without it such a child could only settle FAILED.
 */
export const REPORT_TOOLSET = "subagent-report";

/** `metadata.delegation` of a child session. */
export type Delegation = {
  parentId: string;
  depth: number;
  mode: "spawn" | "fork";
  /** The task as given (cut for listing). */
  task: string;
  via: "tool" | "api";
  role?: string;
  correlationId?: string;
  /** S4: the JSON schema of `structured_output`; the child must report through it. */
  schema?: Record<string, unknown>;
  /** Hermes `allowed_toolsets`: the child is offered only these toolsets. */
  allowedToolsets?: string[];
  metadata?: Record<string, unknown>;
  cancelRequested?: { reason: string; at: string };
};

export function delegationOf(row: SessionRow | undefined): Delegation | undefined {
  const value = row?.metadata.delegation;
  if (!row?.parentId || typeof value !== "object" || value === null) return undefined;
  return value as Delegation;
}

export type SettledData = Extract<LogEvent, { type: "subagent/settled" }>["data"];

export type ChildView = {
  id: string;
  parentId: string;
  mode: "spawn" | "fork";
  task: string;
  state: LifecycleState;
  /** Busy now (a turn open or input waiting), whatever its first settlement said. */
  active: boolean;
  /** The first settlement (the terminal result), if any. */
  settled?: { data: SettledData; at: string };
  correlationId?: string;
};

export type ChildResult = {
  state: LifecycleState;
  text: string;
  structured?: unknown;
  /** SHA-256 (hex) of `text`: stable across calls and servers. */
  hash: string;
  truncated: boolean;
  reason: string;
  /** S3: why a failed child stopped (`<code>: <message>`, at most 4,096 bytes); not part of `hash`. */
  diagnostic?: string;
  settledAt: string;
};

/** The lifecycle view of a child from its row and log. Undefined when the session is not a delegated child. */
export async function childView(store: SessionDirectory, id: string): Promise<ChildView | undefined> {
  const row = await store.getSession(id);
  const delegation = delegationOf(row);
  if (!row || !delegation) return undefined;
  const events = await store.read(id, { types: ["turn/start", "turn/end", "subagent/settled"] });
  const first = events.find((e) => e.type === "subagent/settled");
  const lastStart = events.findLast((e) => e.type === "turn/start");
  const lastEnd = events.findLast((e) => e.type === "turn/end");
  const lastSettled = events.findLast((e) => e.type === "subagent/settled");
  const turnOpen = lastStart !== undefined && (lastEnd === undefined || lastEnd.seq < lastStart.seq);
  const waiting = opensTurn(await store.pendingInbox(id));
  const settledSinceStart =
    lastSettled !== undefined && (lastStart === undefined || lastSettled.seq > lastStart.seq);
  // Cancelled before it ever started (its task was discarded): nothing will run, so it is over.
  const cancelledUnstarted = !lastStart && !waiting && delegation.cancelRequested !== undefined;
  const active = !cancelledUnstarted && (turnOpen || waiting || !settledSinceStart);
  let state: LifecycleState;
  if (first?.type === "subagent/settled") state = terminalState(first.data, delegation);
  else if (cancelledUnstarted) state = "CANCELLED";
  else if (delegation.cancelRequested) state = "CANCEL_REQUESTED";
  else if (lastStart) state = "RUNNING";
  else state = (await leaseLive(store, id)) ? "STARTING" : "PENDING";
  return {
    id,
    parentId: delegation.parentId,
    mode: delegation.mode,
    task: delegation.task,
    state,
    active,
    ...(first?.type === "subagent/settled" ? { settled: { data: first.data, at: first.at } } : {}),
    ...(delegation.correlationId === undefined ? {} : { correlationId: delegation.correlationId }),
  };
}

function terminalState(data: SettledData, delegation: Delegation): LifecycleState {
  switch (data.reason) {
    case "completed":
      return delegation.schema && data.structured === undefined ? "FAILED" : "SUCCEEDED";
    case "aborted":
      return delegation.cancelRequested ? "CANCELLED" : "INTERRUPTED";
    case "interrupted":
      return "INTERRUPTED";
    default:
      return "FAILED";
  }
}

async function leaseLive(store: SessionDirectory, id: string): Promise<boolean> {
  const lease = await store.getLease(sessionLeaseName(id));
  return !!lease?.owner && lease.expiresAt > Date.now();
}

/** The terminal result of a settled child (immutable); undefined while it has not settled. */
export function resultOf(view: ChildView): ChildResult | undefined {
  if (!view.settled) return undefined;
  const { data, at } = view.settled;
  const full = data.closingMessage ?? "";
  const text = full.length > MAX_RESULT_CHARS ? full.slice(0, MAX_RESULT_CHARS) : full;
  return {
    state: view.state,
    text,
    ...(data.structured === undefined ? {} : { structured: data.structured }),
    hash: createHash("sha256").update(text).digest("hex"),
    truncated: text.length < full.length,
    reason: data.reason,
    ...(data.diagnostic === undefined ? {} : { diagnostic: data.diagnostic }),
    settledAt: at,
  };
}

/** The delegated children of a session, oldest first. */
export async function childrenOf(store: SessionDirectory, parentId: string): Promise<SessionRow[]> {
  return (await childSessions(store, parentId)).filter((row) => delegationOf(row));
}
