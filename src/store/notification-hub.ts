/**
 * Fan-out of store notifications to subscribers. The first subscriber starts the dialect's watcher
 * (PostgreSQL: the LISTEN connection; SQLite: the `data_version` poll) and the last one stops it, so an idle
 * store holds no timer and no extra connection.
 *
 * A subscriber that throws never stops delivery to the others: notifications only accelerate, and a lost
 * one is recovered by reading rows.
 */
import type { StoreNotification } from "./store.js";

export type NotificationListener = (notification: StoreNotification) => void;

export class NotificationHub {
  /** Subscribers of every session's notifications. */
  private readonly listeners = new Set<NotificationListener>();
  /** Subscribers of one session's notifications (`sessionId`), by session: an emit reaches only them. */
  private readonly bySession = new Map<string, Set<NotificationListener>>();
  private count = 0;

  constructor(private readonly hooks: { onFirst?: () => void; onLast?: () => void } = {}) {}

  get size(): number {
    return this.count;
  }

  /**
   * `events: false` (the default) filters out `events` notifications for this subscriber; `sessionId` limits
   * it to that session's notifications (and every `resync`).
   */
  add(listener: NotificationListener, options: { events?: boolean; sessionId?: string } = {}): () => void {
    // Wrap so the same function subscribed twice gets two independent subscriptions.
    const entry: NotificationListener = options.events
      ? (n) => listener(n)
      : (n) => n.channel !== "events" && listener(n);
    const set = options.sessionId === undefined ? this.listeners : this.sessionSet(options.sessionId);
    set.add(entry);
    this.count++;
    if (this.count === 1) this.hooks.onFirst?.();
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      set.delete(entry);
      if (options.sessionId !== undefined && set.size === 0) this.bySession.delete(options.sessionId);
      this.count--;
      if (this.count === 0) this.hooks.onLast?.();
    };
  }

  emit(notification: StoreNotification): void {
    deliver(this.listeners, notification);
    if (notification.channel === "resync") {
      for (const set of [...this.bySession.values()]) deliver(set, notification);
    } else {
      const set = this.bySession.get(notification.sessionId);
      if (set) deliver(set, notification);
    }
  }

  private sessionSet(sessionId: string): Set<NotificationListener> {
    let set = this.bySession.get(sessionId);
    if (!set) {
      set = new Set();
      this.bySession.set(sessionId, set);
    }
    return set;
  }
}

function deliver(listeners: ReadonlySet<NotificationListener>, notification: StoreNotification): void {
  // A Set iterates what it holds when each step is taken: a subscriber removed meanwhile is skipped.
  for (const listener of listeners) {
    try {
      listener(notification);
    } catch {
      // A broken subscriber must not starve the others.
    }
  }
}
