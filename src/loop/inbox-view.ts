/**
 * What an agent knows of its session's pending inbox rows (L4), so that it reads them only when they may
 * have changed. The rows as last read are kept; they are read again after an inbox notification (someone
 * added input), a `resync`, or the agent's own enqueue or cancel; the agent's claims are removed from them
 * as it makes them. Notifications only accelerate: input whose notification was lost stays pending in the
 * rows, where the server's sweep (or the next drive, which starts dirty) finds it.
 *
 * A notification that names the row it announces is news only if no read has returned that row: a late one
 * (PostgreSQL's listener is its own connection) for a row the drive already read costs no read. Reads begun
 * are counted, so the server's runner can tell whether a read began after it heard a notification.
 */
import type { InboxItem } from "../store/store.js";

export class InboxView {
  private known: InboxItem[] | undefined;
  /** Not derivable from `known`: a change that lands while a read is in flight must survive it. */
  private dirty = true;
  /** Rows announced since the read in flight began; a read that returns them all has seen the news. */
  private readonly news = new Set<string>();
  /** Something other than an announced row changed the inbox since the read in flight began. */
  private changedOtherwise = false;
  private readsBegun = 0;
  /** Rows read during this drive (pending then); forgotten when the drive ends (`forgetSeen`). */
  private readonly seen = new Set<string>();

  /** Reads of the pending rows begun so far. */
  get reads(): number {
    return this.readsBegun;
  }

  /** The rows as last read; a read is due first when `needsRead`. */
  get rows(): readonly InboxItem[] {
    return this.known ?? [];
  }

  get needsRead(): boolean {
    return this.dirty || this.known === undefined;
  }

  /** The inbox changed in a way not known by row (an enqueue, a cancel, a resync). */
  markChanged(): void {
    this.dirty = true;
    this.changedOtherwise = true;
  }

  /** A notification: row `itemId` was added (undefined: something changed). */
  announced(itemId: string | undefined): void {
    if (itemId === undefined) this.markChanged();
    else if (!this.seen.has(itemId)) {
      this.dirty = true;
      this.news.add(itemId);
    }
  }

  /** A read of the pending rows begins: what changes from here on is news to it. */
  beginRead(): void {
    this.dirty = false;
    this.changedOtherwise = false;
    this.news.clear();
    this.readsBegun++;
  }

  /** The read begun last returned `pending`. */
  read(pending: InboxItem[]): void {
    this.known = pending;
    for (const item of pending) this.seen.add(item.id);
    for (const id of this.news) if (this.seen.has(id)) this.news.delete(id);
    if (this.dirty && !this.changedOtherwise && this.news.size === 0) this.dirty = false;
  }

  /** The agent claimed these rows: they are no longer pending. */
  claimed(items: readonly InboxItem[]): void {
    const taken = new Set(items);
    this.known = this.known?.filter((item) => !taken.has(item));
  }

  hasSeen(itemId: string): boolean {
    return this.seen.has(itemId);
  }

  /** The drive ended: the next one reads afresh and counts its own rows as seen. */
  forgetSeen(): void {
    this.seen.clear();
  }
}
