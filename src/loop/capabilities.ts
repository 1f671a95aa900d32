/**
 * The store-backed capabilities a plugin may declare in `Plugin.needs`. Each is a narrow view built from the
 * agent's store with only the named operations on it, so a plugin holding one cannot reach the rest of the
 * store (the session lease, other sessions' claims, migrations) even by a cast.
 */
import type { LeaseStore } from "../store/hold-lease.js";
import type { PlanningStore, SessionDirectory, Store } from "../store/store.js";

export type StoreCapabilities = {
  /** Goal and schedule rows (P3–P5, S8). */
  planning: PlanningStore;
  /** Named leases for work done once across servers: the compaction lock (C9), a job's liveness (T9). */
  leases: LeaseStore;
  /** Spilled output (T7) and the session's blob quota. */
  blobs: Pick<Store, "putBlob" | "getBlob" | "sessionBlobBytes">;
  /** Background jobs' receipts (T9) and what the terminal checks before trusting one. */
  processes: Pick<Store, "processReceipts" | "getSession" | "getLease">;
  /** Other sessions: a delegating agent's children and its parent (S1–S5). */
  sessions: SessionDirectory;
};

/** A view of `source` with only `names` on it, each bound to the source. */
function only<T extends object, K extends keyof T>(source: T, names: readonly K[]): Pick<T, K> {
  const view = {} as Pick<T, K>;
  for (const name of names) {
    const value = source[name];
    view[name] = (typeof value === "function" ? value.bind(source) : value) as T[K];
  }
  return view;
}

const SESSION_DIRECTORY = [
  "kind",
  "createSession",
  "getSession",
  "listSessions",
  "updateSession",
  "read",
  "append",
  "enqueueInbox",
  "pendingInbox",
  "discardInbox",
  "requestCancel",
  "takeCancelRequests",
  "getLease",
  "harnessKey",
  "subscribe",
] as const satisfies readonly (keyof SessionDirectory)[];

/** Builds the capability `name` from the store when a plugin first asks for it. */
export function storeCapability<K extends keyof StoreCapabilities>(
  store: Store,
  name: K,
): StoreCapabilities[K] {
  const views: { [N in keyof StoreCapabilities]: () => StoreCapabilities[N] } = {
    planning: () => store.planning,
    leases: () => only(store, ["acquireLease", "renewLease", "releaseLease", "getLease"]),
    blobs: () => only(store, ["putBlob", "getBlob", "sessionBlobBytes"]),
    processes: () => only(store, ["processReceipts", "getSession", "getLease"]),
    sessions: () => only(store, SESSION_DIRECTORY),
  };
  return views[name]() as StoreCapabilities[K];
}
