/**
 * The Hermes subagent lifecycle operations on a handle — `status`, `wait`, `cancel`, `result`, `reconnect` —
 * over the store, so they answer the same from any process or server, after restarts too (beyond Hermes,
 * whose handles die with the process and answer `RECONNECT_UNAVAILABLE`).
 *
 * Invariants:
 * - A handle is verified (HMAC, constant-time) before anything about its child is read; a handle that fails,
 *   or names a child that is not the named parent's delegated child, or (for a parent's own service) was
 *   issued to another parent, is `{state: "UNKNOWN", code: "UNKNOWN_HANDLE"}`: the same answer whatever is
 *   wrong with it.
 * - `cancel` is cooperative: it records the request (so the state is CANCEL_REQUESTED at once, on every
 *   server) and asks the driver to stop the child; it never reports CANCELLED before the child settles.
 * - `wait` never throws on a timeout: `{timedOut: true}` with the state seen last.
 * - `result` is the child's first settlement (immutable, idempotent, at most 32,000 characters, no
 *   transcript or reasoning, SHA-256 of the text); older than the retention it is `RESULT_EXPIRED`.
 */
import type { SessionDirectory, StoreNotification } from "../store/store.js";
import { HANDLE_KEY_NAME, issueHandle, type SubagentHandle, verifyHandle } from "./handles.js";
import {
  type ChildResult,
  type ChildView,
  childView,
  type Delegation,
  delegationOf,
  type LifecycleState,
  resultOf,
  TERMINAL_STATES,
} from "./ledger.js";

/** How children get driven: in this process (`bdsh run`, chat) or by the servers' runners (`bdsh serve`). */
export type ChildDriver = {
  /** The session has new input (a child's task or message, a parent's settlement): drive it or let it be claimed. */
  wake(sessionId: string): void;
  /** Stop the session's running turn (L7), wherever it runs. */
  cancel(sessionId: string): Promise<void>;
  /**
   * The driver finds children whose driver died by itself (a server's runner claims every session with
   * an open turn and no live lease, and every session with pending input), so a parent opening need not
   * list its children to wake them.
   */
  readonly findsOrphans?: boolean;
};

export type UnknownHandle = { state: "UNKNOWN"; code: "UNKNOWN_HANDLE" };
export const UNKNOWN_HANDLE: UnknownHandle = Object.freeze({ state: "UNKNOWN", code: "UNKNOWN_HANDLE" });

export type StatusAnswer = { state: LifecycleState; correlationId?: string } | UnknownHandle;
export type WaitAnswer = { state: LifecycleState; timedOut: boolean } | UnknownHandle;
export type ResultAnswer =
  | ({ state: LifecycleState } & ChildResult)
  | { state: LifecycleState; code: "NOT_FINISHED" | "RESULT_EXPIRED" }
  | UnknownHandle;

export class SubagentLifecycle {
  private key: Promise<string> | undefined;

  constructor(
    private readonly store: SessionDirectory,
    private readonly driver: ChildDriver,
    private readonly options: { resultRetentionMs: number; pollMs?: number },
  ) {}

  async issue(childId: string, parentId: string, correlationId?: string): Promise<SubagentHandle> {
    return issueHandle(await this.secret(), childId, parentId, correlationId);
  }

  /** The child's view when the handle is genuine and (if given) issued to `parentId`; else undefined. */
  async open(handle: unknown, parentId?: string): Promise<ChildView | undefined> {
    const ids = verifyHandle(await this.secret(), handle);
    if (!ids || (parentId !== undefined && ids.parentId !== parentId)) return undefined;
    const view = await childView(this.store, ids.childId);
    return view && view.parentId === ids.parentId ? view : undefined;
  }

  async status(handle: unknown, parentId?: string): Promise<StatusAnswer> {
    const view = await this.open(handle, parentId);
    if (!view) return UNKNOWN_HANDLE;
    return { state: view.state, ...(view.correlationId ? { correlationId: view.correlationId } : {}) };
  }

  /** `signal`: the caller stopped listening (an HTTP client went away); answered as a timeout. */
  async wait(
    handle: unknown,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
    parentId?: string,
  ): Promise<WaitAnswer> {
    let view = await this.open(handle, parentId);
    if (!view) return UNKNOWN_HANDLE;
    const deadline = Date.now() + waitBudget(options.timeoutMs);
    while (!TERMINAL_STATES.has(view.state)) {
      const left = deadline - Date.now();
      if (left <= 0 || options.signal?.aborted) return { state: view.state, timedOut: true };
      await changeOf(this.store, view.id, Math.min(left, this.options.pollMs ?? 1_000), options.signal);
      view = (await childView(this.store, view.id)) ?? view;
    }
    return { state: view.state, timedOut: false };
  }

  async cancel(handle: unknown, options: { reason?: string } = {}, parentId?: string): Promise<StatusAnswer> {
    const view = await this.open(handle, parentId);
    if (!view) return UNKNOWN_HANDLE;
    if (TERMINAL_STATES.has(view.state)) return { state: view.state };
    await requestChildCancel(this.store, this.driver, view.id, options.reason ?? "cancelled by the parent");
    return { state: "CANCEL_REQUESTED" };
  }

  async result(handle: unknown, parentId?: string): Promise<ResultAnswer> {
    const view = await this.open(handle, parentId);
    if (!view) return UNKNOWN_HANDLE;
    const result = resultOf(view);
    if (!result) return { state: view.state, code: "NOT_FINISHED" };
    if (Date.now() - Date.parse(result.settledAt) > this.options.resultRetentionMs)
      return { state: view.state, code: "RESULT_EXPIRED" };
    return { ...result, state: view.state };
  }

  /** Another process picks a handle up again: the same handle back, with the state the store holds. */
  async reconnect(
    handle: unknown,
    parentId?: string,
  ): Promise<{ state: LifecycleState; handle: SubagentHandle } | UnknownHandle> {
    const view = await this.open(handle, parentId);
    if (!view) return UNKNOWN_HANDLE;
    const h = handle as SubagentHandle;
    return { state: view.state, handle: await this.issue(view.id, view.parentId, h.correlationId) };
  }

  private secret(): Promise<string> {
    this.key ??= this.store.harnessKey(HANDLE_KEY_NAME);
    return this.key;
  }
}

/**
 * How long `wait` may wait: 30 s when not given; a value that is not a number of milliseconds (NaN, a
 * string, a negative number) is 0, so a bad timeout answers at once instead of never.
 */
function waitBudget(timeoutMs: unknown): number {
  if (timeoutMs === undefined) return 30_000;
  return typeof timeoutMs === "number" && timeoutMs >= 0 ? timeoutMs : 0;
}

/**
 * Records a cancel request on the child (CANCEL_REQUESTED everywhere at once), clears its pending input,
 * then stops it through the driver.
 */
export async function requestChildCancel(
  store: SessionDirectory,
  driver: ChildDriver,
  childId: string,
  reason: string,
): Promise<void> {
  const row = await store.getSession(childId);
  const delegation = delegationOf(row);
  if (!row || !delegation) return;
  if (!delegation.cancelRequested) {
    const marked: Delegation = { ...delegation, cancelRequested: { reason, at: new Date().toISOString() } };
    await store.updateSession(childId, { metadata: { ...row.metadata, delegation: marked } });
  }
  // L7: a cancel clears the pending input, here for every driver. A child no one has claimed yet would
  // otherwise keep its task: the server that claims it drops the stale cancel request and runs the task.
  const pending = await store.pendingInbox(childId);
  if (pending.length)
    await store.discardInbox(
      childId,
      pending.map((item) => item.id),
    );
  await driver.cancel(childId);
}

/** Resolves on the next event or inbox change of `sessionId`, after `ms`, or when `signal` aborts. */
export function changeOf(
  store: SessionDirectory,
  sessionId: string,
  ms: number,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    let finished = false;
    let stop: (() => void) | undefined;
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      stop?.();
      resolve();
    }
    if (signal?.aborted) done();
    stop = store.subscribe(
      (n: StoreNotification) => {
        // The subscription's first `resync` only says it is live; it is not a change.
        if (n.channel !== "resync" && n.sessionId === sessionId) done();
      },
      { events: true, sessionId },
    );
    if (finished) stop();
  });
}
