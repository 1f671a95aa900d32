/**
 * Which sessions this server drives (L4, L16, R1; ARCHITECTURE "Storage").
 *
 * Invariants:
 * - Ownership is the session lease (`session:<id>`, renewed by the Agent's heartbeat, fenced appends). The
 *   runner *claims* work by taking leases in one statement (`claimPendingSessions`: sessions with pending
 *   turn input and no live holder, oldest first), then hands each claimed session to its Agent, whose own
 *   acquire extends the same lease. The runner never writes to a log.
 * - Capacity: at most `maxRunning` sessions drive here at once. Work beyond that waits in the inbox rows,
 *   where any server with room claims it; a server that fills up claims again as soon as a drive ends.
 * - Wake-ups: a row queued with its session's claim (`submit`, here or elsewhere) is announced as such and
 *   makes no claim pass anywhere (its claimer drives it; should it die, its lease lapses and the sweep
 *   finds the input). An inbox notification for a session this server drives is checked at once: a cancel request
 *   (an inbox row of its own kind, never input, announced as such) is taken and becomes `agent.cancel()`,
 *   L7; new input costs no statement: it is remembered, and when the drive ends the rows are looked at
 *   only if the agent began no inbox read after it, so input queued between the agent's last inbox read and
 *   its lease release is not stranded. A `resync` looks for cancel requests of every session
 *   driving here (SQLite tells another process's commits only that way). Any other inbox notification, the
 *   periodic sweep and a `resync` all lead to one coalesced claim pass; a notification that arrives during
 *   a pass which then claims its session needs no pass of its own (the drive reads the inbox after).
 *   Notifications only accelerate; the sweep alone would be enough (lost notifications, lapsed owners)
 *   for input, not for a cancel.
 * - A session whose lease another live owner holds is never claimed (that owner sees the input; if it dies
 *   its lease lapses and a later claim takes the session, whose Agent repairs the interrupted turn, R1).
 * - Orphaned turns (R1, L9): a pass started by the sweep, the lapse timer, a `resync` or
 *   the runner's start first claims sessions whose last turn is open and whose lease is not live
 *   (`claimOrphanedSessions`), with no input needed. A pass started by new input does not: an orphan appears
 *   only when a lease lapses, which the lapse timer watches, and the query walks every open turn (with many
 *   sessions driving, each message would pay for all of them). Their Agent closes the turn
 *   honestly on taking the lease (synthetic results for unanswered calls, `turn/end` `interrupted`) and,
 *   with nothing pending, starts nothing: no auto-continue, and no goal round (R2: the repair disarms the
 *   goal, as a `goal/armed` event). A lease lapse makes no notification, so the pass also learns when the soonest live
 *   session lease lapses and looks again right then: a dead driver's turn is closed within about the
 *   lease's time to live, however long the sweep interval.
 * - An idle agent cached here may predate turns another server drove; it is reused as it is: its plugins'
 *   state (goal activation, file observations, the repeat chain) is folded from the log, which the drive
 *   reads up to date on taking the lease.
 * - Idle sessions hold nothing: no lease. Idle agents stay cached (LRU) up to `maxSessions`; an agent whose
 *   drive failed (a lost lease, a failed flush) is dropped, since its memory may hold unflushed events.
 * - `stop()` (SIGTERM): stop claiming, let in-flight turns finish within a grace period, then cancel the
 *   rest (turn ends `aborted`, honestly closed, L7/L8), keeping their pending inbox for another server;
 *   each Agent releases its lease when its drive ends.
 */
import type { Agent, ClaimedRead } from "../loop/agent.js";
import {
  type EnqueuedClaim,
  type EnqueueOptions,
  type InboxItem,
  type NewInboxItem,
  opensTurn,
  type SessionRow,
  type Store,
  type StoreNotification,
  sessionLeaseName,
} from "../store/store.js";

export type SessionRunnerOptions<A extends Agent = Agent> = {
  store: Store;
  /** This server's lease owner id. */
  owner: string;
  /**
   * Creates the Agent of an existing session (the standard preset, `openAgent`); `row`: the session row
   * a claim has just read, for the opener not to read it again.
   */
  open: (sessionId: string, row?: SessionRow) => Promise<A>;
  sweepIntervalMs: number;
  /** Agents kept in memory, running or idle. */
  maxSessions: number;
  /** Sessions driven here at once (at most `maxSessions`); the rest wait for room here or elsewhere. */
  maxRunning: number;
  /** The session lease's time to live (the Agent renews it while it drives). */
  leaseTtlMs: number;
  /** SIGTERM: how long in-flight turns may run before they are cancelled. */
  shutdownGraceMs: number;
  onError?: (error: unknown, sessionId?: string) => void;
  /** Sessions claimed from a holder whose lease lapsed with a turn open (metrics). */
  onTakeover?: (count: number) => void;
  /** Whether an idle agent may be evicted (false while it has running background jobs, T9). */
  evictable?(agent: A): boolean;
};

/** A `submit` claim in flight: the rows announced meanwhile (undefined: unnamed), and whether a cancel was. */
type Submitting = { heard: (string | undefined)[]; cancel: boolean };

type Entry<A extends Agent> = {
  agent: Promise<A>;
  /**
   * A drive begun with what its claim read (`submit`): the inbox notifications heard before the agent is
   * kicked (the rows they name may be newer than that read), passed on to it at the kick.
   */
  heardBeforeKick?: (string | undefined)[];
  /** The agent once opened. */
  opened?: A;
  /** Resolves when the current drive (and any re-kick) ends; undefined when idle. */
  running: Promise<void> | undefined;
  /**
   * An inbox notification (or resync) came while driving: how many inbox reads the agent had begun then.
   * A read begun after it saw the input; if none was, the runner looks at the rows when the drive ends.
   */
  notifiedAtReads: number | undefined;
  lastUsed: number;
};

export class SessionRunner<A extends Agent = Agent> {
  private readonly entries = new Map<string, Entry<A>>();
  private running = 0;
  /**
   * Slots promised to claims in flight (a pass's, a `submit`'s): the two run side by side, and each must
   * see the other's claims before its sessions reach `drive`, or together they would pass `maxRunning`.
   */
  private reserved = 0;
  private unsubscribe: (() => void) | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  /** A claim pass at the moment the soonest live session lease lapses. */
  private lapseTimer: NodeJS.Timeout | undefined;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  /**
   * Sessions whose inbox notification arrived while a claim pass was in flight (see `wake`), with the rows
   * they announced (null: a change not known by row).
   */
  private readonly wokenDuringPass = new Map<string, string[] | null>();
  /** Sessions whose `submit` claim is in flight, with the rows announced meanwhile (undefined: unnamed). */
  private readonly submitting = new Map<string, Submitting>();
  /** A claim pass filled every free slot (or was skipped for want of one): more work may be waiting. */
  private full = false;
  /** The next claim pass also looks for orphaned turns (set by the timers, a resync and the start). */
  private orphansDue = true;
  private stopping = false;

  constructor(private readonly options: SessionRunnerOptions<A>) {}

  get owner(): string {
    return this.options.owner;
  }

  get stopped(): boolean {
    return this.stopping;
  }

  /** Sessions whose agent is in memory here, and how many of them are driving now. */
  stats(): { cached: number; running: number } {
    return { cached: this.entries.size, running: this.running };
  }

  start(): void {
    this.unsubscribe = this.options.store.subscribe((n) => this.onNotification(n));
    this.sweepTimer = setInterval(() => void this.sweep(true), this.options.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  /**
   * The session's agent on this server (opened on first use); for routes that act on it (cancel, goals).
   * A cached agent needs no rebuild after another server drove the session: its state is folded from the
   * log, which it reads up to date whenever it writes (a drive, an exclusive section).
   */
  async agent(sessionId: string): Promise<A> {
    return this.entry(sessionId).agent;
  }

  /** The cached agent, if this server has one (it may or may not be driving). */
  cachedAgent(sessionId: string): Promise<A> | undefined {
    return this.entries.get(sessionId)?.agent;
  }

  /**
   * The session's inbox changed: check it if it drives here, else look for work to claim. `cancel`: what
   * was added is a cancel request (only then is one looked for: input costs a driving session nothing).
   */
  async wake(sessionId: string, options: { cancel?: boolean; itemId?: string } = {}): Promise<void> {
    if (this.stopping) return;
    const submitted = this.submitting.get(sessionId);
    if (submitted) {
      // Its claim is in flight: what it did not read is passed on to its drive (or, unclaimed, ignored:
      // the live holder of the lease hears it too); a cancel is looked at once the claim is settled.
      if (options.cancel) submitted.cancel = true;
      else submitted.heard.push(options.itemId);
      return;
    }
    const existing = this.entries.get(sessionId);
    if (existing?.running) {
      if (options.cancel && (await this.cancelIfAsked(sessionId, existing))) return;
      if (existing.heardBeforeKick) {
        existing.heardBeforeKick.push(options.itemId);
        return;
      }
      // A row the drive has already read (the message whose wake started it, heard again late) is no news.
      if (options.itemId !== undefined && existing.opened?.hasSeenInboxItem(options.itemId)) return;
      this.noteNotified(existing);
      return;
    }
    if (this.claiming) {
      // One message wakes twice (the route that queued it, then its notification): if the pass in flight
      // claims the session, the drive it starts reads the inbox after the claim, so no second pass is due.
      const items = this.wokenDuringPass.get(sessionId);
      const itemId = items === null ? undefined : options.itemId;
      this.wokenDuringPass.set(sessionId, itemId === undefined ? null : [...(items ?? []), itemId]);
      return this.claiming;
    }
    await this.sweep();
  }

  /**
   * Queues input for a session (the API's routes). With a free slot here (and no sign that older work
   * waits), a session not driving here and input that opens a turn, the same round trip also claims the
   * session and reads what its drive needs (Store.enqueueAndClaim), and this server drives it at once: no
   * claim pass, no read of its own. Otherwise, or when another server holds the session live, the row
   * waits, as any enqueue's, for the claim passes (here or anywhere) or the holder's drive.
   */
  async submit(sessionId: string, item: NewInboxItem, options: EnqueueOptions = {}): Promise<InboxItem> {
    const { store, owner, leaseTtlMs } = this.options;
    const existing = this.entries.get(sessionId);
    if (
      this.stopping ||
      this.full ||
      this.room() === 0 ||
      existing?.running ||
      this.submitting.has(sessionId) ||
      !opensTurn([item])
    ) {
      const queued = await store.enqueueInbox(sessionId, item, options);
      void this.wake(sessionId, { itemId: queued.id }).catch((error: unknown) =>
        this.options.onError?.(error, sessionId),
      );
      return queued;
    }
    // An agent already open knows its log up to some seq; one yet to open reads it whole on its drive.
    const after = existing?.opened?.loggedSeq ?? 0;
    const heard: Submitting = { heard: [], cancel: false };
    this.submitting.set(sessionId, heard);
    this.reserved++; // the slot this claim may take, held while it is in flight
    const claimedAt = Date.now();
    let result: EnqueuedClaim;
    try {
      result = await store.enqueueAndClaim(sessionId, item, { owner, ttlMs: leaseTtlMs, after }, options);
    } finally {
      this.reserved--;
      this.submitting.delete(sessionId);
    }
    const wake = (options: { cancel?: boolean }) =>
      this.wake(sessionId, options).catch((error: unknown) => this.options.onError?.(error, sessionId));
    if (result.claimed) {
      if (this.stopping || this.entries.get(sessionId)?.running || !this.makeRoom(sessionId)) {
        await this.release(sessionId);
        void wake({});
      } else this.drive(sessionId, claimedAt, { after, read: result.claimed }, heard.heard);
    }
    if (heard.cancel) void wake({ cancel: true });
    return result.item;
  }

  /** One claim pass (coalesced: a call during a pass makes the pass run once more); `orphans`: look for them too. */
  sweep(orphans = false): Promise<void> {
    if (orphans) this.orphansDue = true;
    if (this.claiming) {
      this.claimAgain = true;
      return this.claiming;
    }
    this.claiming = (async () => {
      try {
        do {
          this.claimAgain = false;
          await this.claim();
          this.settleWakes();
        } while (this.claimAgain && !this.stopping);
      } catch (error) {
        this.options.onError?.(error);
      } finally {
        this.claiming = undefined;
      }
    })();
    return this.claiming;
  }

  /**
   * Graceful shutdown, all of it within `shutdownGraceMs` from the call: no new work; in-flight turns may
   * finish until `CANCEL_AT` of the grace, then are cancelled (L7: closed `aborted` here, their inbox kept
   * for another server, as a handover: no goal is paused by it); no agent starts another turn (`drain`:
   * a goal round or message queued meanwhile is claimed by another server); a turn still not closed at `GIVE_UP_AT` (a tool or a stream that does not stop
   * when asked) is left as it is, lease and all: its lease lapses and whichever server claims the session
   * next repairs the turn (L8/L9), exactly as after a crash. Leases are released by each drive that ends.
   */
  async stop(): Promise<void> {
    const begun = Date.now();
    const grace = this.options.shutdownGraceMs;
    const cancelAt = begun + grace * CANCEL_AT;
    const giveUpAt = begun + Math.max(grace * GIVE_UP_AT, MIN_CLOSING_MS);
    this.stopping = true;
    // No new turn starts here: what is queued (a goal round, a message) is for the server that takes over.
    for (const entry of this.entries.values())
      void entry.agent.then(
        (agent) => agent.drain(),
        () => undefined,
      );
    this.unsubscribe?.();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.lapseTimer) clearTimeout(this.lapseTimer);
    await until(this.claiming ?? Promise.resolve(), giveUpAt);
    const drives = () => Promise.allSettled([...this.entries.values()].map((e) => e.running));
    if ((await until(drives(), cancelAt)) === "late") {
      const cancels = [...this.entries.values()].map(async (entry) => {
        if (!entry.running) return;
        const agent = await entry.agent;
        await agent.cancel({ keepInbox: true, handover: true }); // no person asked: a goal is not paused
      });
      await until(Promise.allSettled(cancels), giveUpAt);
    }
    const left = (await until(drives(), giveUpAt)) === "late";
    const idle = [...this.entries.values()].filter((e) => !e.running);
    if (left) {
      const count = this.entries.size - idle.length;
      this.options.onError?.(
        new Error(
          `stopped with ${count} turn(s) still open; another server repairs them once their leases lapse`,
        ),
      );
    }
    await until(
      Promise.all(idle.map((e) => e.agent.then((a) => a.close()).catch(() => undefined))),
      giveUpAt,
    );
    this.entries.clear();
  }

  private onNotification(notification: StoreNotification): void {
    if (this.stopping) return;
    if (notification.channel === "inbox") {
      const { sessionId, itemId, cancel, claimed } = notification;
      // Queued with its session's claim (`submit` here or on another server): the claimer drives it, so
      // a claim pass here would find nothing. Only a drive or a claim in flight here has use for it.
      if (claimed && !this.entries.get(sessionId)?.running && !this.submitting.has(sessionId)) return;
      this.wake(sessionId, { cancel: cancel === true, ...(itemId === undefined ? {} : { itemId }) }).catch(
        (error: unknown) => this.options.onError?.(error, notification.sessionId),
      );
    } else if (notification.channel === "resync") {
      for (const [sessionId, entry] of this.entries) {
        if (!entry.running) continue;
        this.noteNotified(entry);
        // A resync may hide a cancel request (SQLite tells another process's commits only this way).
        this.cancelIfAsked(sessionId, entry).catch((error: unknown) =>
          this.options.onError?.(error, sessionId),
        );
      }
      void this.sweep(true); // another process may have died meanwhile
    }
  }

  /**
   * The wakes that arrived during a claim pass: one for a session driving here now is covered by its drive
   * (which reads the inbox after taking the lease; should it have read already, its next look reads the
   * rows again); any other needs another pass.
   */
  private settleWakes(): void {
    for (const [sessionId, items] of this.wokenDuringPass) {
      const entry = this.entries.get(sessionId);
      if (!entry?.running) this.claimAgain = true;
      else if (items === null) entry.opened?.inboxChanged();
      else for (const itemId of items) entry.opened?.inboxChanged(itemId);
    }
    this.wokenDuringPass.clear();
  }

  private noteNotified(entry: Entry<A>): void {
    entry.notifiedAtReads = entry.opened?.inboxReads ?? 0;
  }

  /**
   * L7 asked on another server: a cancel request for a session driving here is consumed
   * and becomes `agent.cancel()` (the delivered prefix kept, the pending inbox cleared); it never reaches
   * the model. True when there was one.
   */
  private async cancelIfAsked(sessionId: string, entry: Entry<A>): Promise<boolean> {
    if ((await this.options.store.takeCancelRequests(sessionId)) === 0) return false;
    await (await entry.agent).cancel();
    return true;
  }

  private async claim(): Promise<void> {
    const room = this.room();
    this.full = room === 0;
    if (this.stopping || room === 0) return;
    // Before the claims are sent: each lease taken lives at least its TTL from here (holdLease `claimedAt`).
    const claimedAt = Date.now();
    let claimed: string[];
    this.reserved += room;
    try {
      claimed = await this.claimSessions(room);
    } finally {
      this.reserved -= room;
    }
    for (const id of claimed) {
      if (this.stopping || this.entries.get(id)?.running || !this.makeRoom(id)) {
        await this.release(id);
        continue;
      }
      this.drive(id, claimedAt);
    }
  }

  /** One pass's claims, at most `room`: orphaned turns first (closing one is short), then sessions with input. */
  private async claimSessions(room: number): Promise<string[]> {
    const { store, owner, leaseTtlMs } = this.options;
    let orphans: { ids: string[] } = { ids: [] };
    if (this.orphansDue) {
      this.orphansDue = false;
      const claimed = await store.claimOrphanedSessions(owner, leaseTtlMs, room);
      orphans = claimed;
      if (claimed.ids.length) this.options.onTakeover?.(claimed.ids.length);
      // No live lease seen may only mean another server's claim of new input commits just after this read.
      this.watchLapse(claimed.nextLapseMs ?? leaseTtlMs);
    }
    const left = room - orphans.ids.length;
    const pending = left > 0 ? await store.claimPendingSessions(owner, leaseTtlMs, left) : [];
    this.full = orphans.ids.length + pending.length === room;
    return [...orphans.ids, ...pending];
  }

  /** A claim pass right after the soonest live session lease lapses. */
  private watchLapse(nextLapseMs: number | undefined): void {
    if (this.lapseTimer) clearTimeout(this.lapseTimer);
    this.lapseTimer = undefined;
    if (this.stopping || nextLapseMs === undefined) return;
    // Past the expiry, by the store's clock. Set even when a sweep comes first: that sweep sets it again,
    // and a sweep just after the lapse would add up to its whole interval to the repair.
    const delay = Math.ceil(nextLapseMs) + 25;
    this.lapseTimer = setTimeout(() => {
      this.lapseTimer = undefined;
      void this.sweep(true);
    }, delay);
    this.lapseTimer.unref();
  }

  /** Free driving slots (cached idle agents are evicted as needed, see makeRoom). */
  private room(): number {
    return Math.max(0, this.options.maxRunning - this.running - this.reserved);
  }

  private entry(sessionId: string, row?: SessionRow): Entry<A> {
    let entry = this.entries.get(sessionId);
    if (!entry) {
      const opened = this.options.open(sessionId, row);
      const created: Entry<A> = {
        agent: opened,
        running: undefined,
        notifiedAtReads: undefined,
        lastUsed: Date.now(),
      };
      entry = created;
      this.entries.set(sessionId, created);
      opened.then(
        (agent) => {
          created.opened = agent;
        },
        () => undefined,
      );
      opened.catch(() => {
        if (this.entries.get(sessionId)?.agent === opened) this.entries.delete(sessionId);
      });
    }
    entry.lastUsed = Date.now();
    return entry;
  }

  /**
   * Drives a session whose lease this server claimed at `claimedAt` (the drive adopts it, not acquires it).
   * `claimedRead`: what the claim read for the drive (`submit`), and the notifications heard since.
   */
  private drive(
    sessionId: string,
    claimedAt: number,
    claimedRead?: ClaimedRead,
    heard: (string | undefined)[] = [],
  ): void {
    const entry = this.entry(sessionId, claimedRead?.read.session);
    this.running++;
    if (claimedRead) entry.heardBeforeKick = heard;
    const run = (async () => {
      // Claimed with no one driving: a cancel request left in the inbox came too late to matter (the claim
      // consumed it, Store.claimPendingSessions).
      let agent: A;
      try {
        agent = await entry.agent;
      } finally {
        entry.heardBeforeKick = undefined;
      }
      let failed = false;
      let claim: number | undefined = claimedAt;
      do {
        entry.notifiedAtReads = undefined;
        // Only the first kick adopts the claimed lease (and its read): each drive releases it when it ends.
        agent.kick(claim, claim === undefined ? undefined : claimedRead);
        if (claim !== undefined) for (const itemId of heard) agent.inboxChanged(itemId);
        claim = undefined;
        try {
          await agent.whenIdle();
        } catch (error) {
          failed = true;
          this.options.onError?.(error, sessionId);
        }
      } while (
        !failed &&
        !this.stopping &&
        entry.notifiedAtReads !== undefined &&
        agent.inboxReads <= entry.notifiedAtReads &&
        (await this.hasTurnInput(sessionId))
      );
      if (failed) {
        this.drop(sessionId, entry);
        await this.release(sessionId);
      }
    })();
    entry.running = run;
    run
      .catch(async (error: unknown) => {
        this.options.onError?.(error, sessionId);
        this.drop(sessionId, entry);
        await this.release(sessionId);
      })
      .finally(() => {
        if (entry.running === run) entry.running = undefined;
        this.running--;
        if (this.full) void this.sweep(); // a slot opened and work may be waiting
      });
  }

  /** The Agent releases the lease when its drive ends; this covers a drive that failed or never began. */
  private release(sessionId: string): Promise<unknown> {
    return this.options.store
      .releaseLease(sessionLeaseName(sessionId), this.options.owner)
      .catch(() => undefined);
  }

  private async hasTurnInput(sessionId: string): Promise<boolean> {
    const pending = await this.options.store.pendingInbox(sessionId);
    return opensTurn(pending);
  }

  /** An agent whose drive failed may hold unflushed events: never reuse it. */
  private drop(sessionId: string, entry: Entry<A>): void {
    if (this.entries.get(sessionId) !== entry) return;
    this.entries.delete(sessionId);
    void entry.agent.then((agent) => agent.close()).catch(() => undefined);
  }

  /** Makes space for `sessionId`'s agent: evicts the least recently used idle agent when at the cap. */
  private makeRoom(sessionId: string): boolean {
    if (this.entries.has(sessionId) || this.entries.size < this.options.maxSessions) return true;
    let oldest: [string, Entry<A>] | undefined;
    for (const pair of this.entries) {
      if (pair[1].running || !pair[1].opened) continue;
      if (this.options.evictable && !this.options.evictable(pair[1].opened)) continue; // T9: its jobs run here
      if (!oldest || pair[1].lastUsed < oldest[1].lastUsed) oldest = pair;
    }
    if (!oldest) return false;
    this.drop(oldest[0], oldest[1]);
    return true;
  }
}

/** Of the shutdown grace: when turns still running are cancelled, and when those still open are left. */
const CANCEL_AT = 0.5;
const GIVE_UP_AT = 0.85;
/** However short the grace (0: cancel at once), cancelled turns get this long to close here. */
const MIN_CLOSING_MS = 250;

/** Waits for `work` until the clock reaches `deadline`; "late" when it had not settled by then. */
async function until(work: Promise<unknown>, deadline: number): Promise<"done" | "late"> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work.then(() => "done" as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
