/**
 * The driver's view of its session log: the events read so far, the events added but not yet flushed,
 * and the surface projected from both (C1).
 *
 * Invariants:
 * - Only the lease holder writes. Events get their seq when added (the holder is the only writer), and
 *   `flush` appends every buffered event in one transaction, fenced by the lease owner (L17).
 * - The surface and the event list always include buffered events: the request is built from them, and
 *   `flush` runs before every request, so what is sent is always durable first.
 * - A flush that fails leaves the buffer in place and throws: the caller's turn ends and nothing is lost
 *   from memory; the store holds exactly what was committed.
 * - A flush asks for `disk` durability unless told `commit` (store.ts `AppendDurability`). A `disk` append
 *   also brings every earlier `commit` append to disk; a flush with nothing buffered writes nothing, so a
 *   caller that needs `disk` before an effect adds the event that records the effect first (the loop's
 *   `tool/call`, `turn/end`).
 * - Every added event's data passes the redactor first, so the store, the listeners
 *   (`--json`, SSE) and the surface (the model's history) only ever see the redacted form.
 */
import type { EventType, LogEvent, NewEvent } from "../log/events.js";
import { Redactor } from "../log/redact.js";
import { SurfaceProjector } from "../log/surface.js";
import { type AppendDurability, type DriveRead, type Store, sessionLeaseName } from "../store/store.js";

export type LogListener = (events: readonly LogEvent[]) => void;

export class SessionLog {
  readonly events: LogEvent[] = [];
  private projector = new SurfaceProjector();
  private buffered: LogEvent[] = [];
  private claims: string[] = [];
  /** The newest event of each type (plugins ask for these every step; a scan back would be O(log)). */
  private latest = new Map<EventType, LogEvent>();
  private durableSeq = 0;
  private readonly listeners = new Set<LogListener>();
  private readonly durableListeners = new Set<LogListener>();
  /** Flushes run one at a time: parallel tool dispatches each flush, and two appends would race on seq. */
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    readonly sessionId: string,
    private readonly owner: string,
    private readonly now: () => Date = () => new Date(),
    private readonly redactor: Redactor = Redactor.none,
  ) {}

  /** Loads the events after what is already known (used on lease takeover and at open). */
  async load(): Promise<LogEvent[]> {
    const fresh = await this.store.read(this.sessionId, { after: this.seq });
    this.accept(fresh);
    return fresh;
  }

  /**
   * `load` for a driver that has just taken the lease: the same events, with the pending input and the
   * session row read at the same moment, in one round trip (Store `readForDrive`).
   */
  async loadForDrive(): Promise<Omit<DriveRead, "events">> {
    const { events: fresh, pending, session } = await this.store.readForDrive(this.sessionId, this.seq);
    this.accept(fresh);
    return { pending, session };
  }

  /**
   * What a claim read on taking the lease (the events after `after`, the session row): taken, and true,
   * when it brings this log exactly up to the row's last seq; otherwise nothing is taken (the caller reads).
   */
  acceptClaimed(after: number, read: Pick<DriveRead, "events" | "session">): boolean {
    const lastSeq = read.session?.lastSeq;
    if (lastSeq === undefined || after > this.seq || this.buffered.length > 0) return false;
    const fresh = read.events.filter((event) => event.seq > this.seq);
    if ((fresh.at(-1)?.seq ?? this.seq) !== lastSeq) return false;
    if (fresh.some((event, i) => event.seq !== this.seq + 1 + i)) return false;
    this.accept(fresh);
    return true;
  }

  /** Forgets everything; the next `load` reads the whole log again. */
  reset(): void {
    this.events.length = 0;
    this.buffered = [];
    this.claims = [];
    this.latest = new Map();
    this.durableSeq = 0;
    this.projector = new SurfaceProjector();
  }

  get seq(): number {
    return this.events.length === 0 ? 0 : this.events[this.events.length - 1]!.seq;
  }

  get surface() {
    return this.projector;
  }

  get hasUnflushed(): boolean {
    return this.buffered.length > 0;
  }

  add(...events: NewEvent[]): LogEvent[] {
    const at = this.now().toISOString();
    const added = events.map((event) => {
      const data = this.redactor.value(event.data);
      const stored = { at, ...event, data, sessionId: this.sessionId, seq: this.seq + 1 } as LogEvent;
      this.acceptOne(stored);
      return stored;
    });
    this.buffered.push(...added);
    this.publish(added);
    return added;
  }

  /**
   * Inbox rows this log has taken (their `agent/inbox/spliced` events are added): the next flush consumes
   * them in the same append as those events, whoever calls it, so a turn's claim rides on the step's
   * pre-request flush instead of a commit of its own.
   */
  claim(ids: readonly string[]): void {
    this.claims.push(...ids);
  }

  /**
   * L17: makes every added event durable, consuming the claimed inbox rows in the same append. `commit` is
   * enough before a model request (L17 "Here:"); the default, `disk`, is for what precedes an effect.
   * `releaseLease`: the holder's last write; the session lease is let go in the same append (or on its
   * own when nothing is buffered). Only the lease's holder (HeldLease `releaseBy`) asks for it.
   */
  flush(options: { durability?: AppendDurability; releaseLease?: boolean } = {}): Promise<void> {
    const durability = options.durability ?? "disk";
    const release = options.releaseLease === true;
    const run = this.flushing.then(() => this.flushNow(durability, release));
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async flushNow(durability: AppendDurability, releaseLease: boolean): Promise<void> {
    if (this.buffered.length === 0 && this.claims.length === 0) {
      if (releaseLease) await this.store.releaseLease(sessionLeaseName(this.sessionId), this.owner);
      return;
    }
    // Events added while the append is in flight go to a fresh buffer, for the next flush.
    const batch = this.buffered;
    const claims = this.claims;
    this.buffered = [];
    this.claims = [];
    try {
      await this.store.append(
        this.sessionId,
        batch.map(({ type, data, turn, step, at }) => ({ type, data, turn, step, at }) as NewEvent),
        this.durableSeq,
        {
          leaseOwner: this.owner,
          durability,
          ...(claims.length ? { claimInbox: claims } : {}),
          ...(releaseLease ? { releaseLease } : {}),
        },
      );
    } catch (error) {
      this.buffered = [...batch, ...this.buffered];
      this.claims = [...claims, ...this.claims];
      throw error;
    }
    this.durableSeq += batch.length;
    for (const listener of this.durableListeners) listener(batch);
  }

  last<K extends EventType>(type: K): Extract<LogEvent, { type: K }> | undefined {
    return this.latest.get(type) as Extract<LogEvent, { type: K }> | undefined;
  }

  onEvents(listener: LogListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events once they are durable (after the flush that stored them), in seq order. */
  onDurable(listener: LogListener): () => void {
    this.durableListeners.add(listener);
    return () => this.durableListeners.delete(listener);
  }

  /** Takes events read from the store (after everything known): known, durable and published. */
  private accept(fresh: readonly LogEvent[]): void {
    for (const event of fresh) this.acceptOne(event);
    this.durableSeq = this.seq;
    if (fresh.length) {
      this.publish(fresh);
      for (const listener of this.durableListeners) listener(fresh);
    }
  }

  private acceptOne(event: LogEvent): void {
    this.events.push(event);
    this.latest.set(event.type, event);
    this.projector.apply(event);
  }

  private publish(events: readonly LogEvent[]): void {
    for (const listener of this.listeners) listener(events);
  }
}
