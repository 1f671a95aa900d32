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
  private readonly listeners = new Set<NotificationListener>();

  constructor(private readonly hooks: { onFirst?: () => void; onLast?: () => void } = {}) {}

  get size(): number {
    return this.listeners.size;
  }

  /** `events: false` (the default) filters out `events` notifications for this subscriber. */
  add(listener: NotificationListener, options: { events?: boolean } = {}): () => void {
    // Wrap so the same function subscribed twice gets two independent subscriptions.
    const entry: NotificationListener = options.events
      ? (n) => listener(n)
      : (n) => n.channel !== "events" && listener(n);
    this.listeners.add(entry);
    if (this.listeners.size === 1) this.hooks.onFirst?.();
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.listeners.delete(entry);
      if (this.listeners.size === 0) this.hooks.onLast?.();
    };
  }

  emit(notification: StoreNotification): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(notification);
      } catch {
        // A broken subscriber must not starve the others.
      }
    }
  }
}
