/**
 * Which sessions this server drives (issue 8 items 3 and 4; L4, L16, R1; ARCHITECTURE "Storage").
 *
 * Invariants:
 * - Ownership is the session lease (`session:<id>`, renewed by the Agent's heartbeat, fenced appends). The
 *   runner *claims* work by taking leases in one statement (`claimPendingSessions`: sessions with pending
 *   turn input and no live holder, oldest first), then hands each claimed session to its Agent, whose own
 *   acquire extends the same lease. The runner never writes to a log.
 * - Capacity: at most `maxRunning` sessions drive here at once. Work beyond that waits in the inbox rows,
 *   where any server with room claims it; a server that fills up claims again as soon as a drive ends.
 * - Wake-ups: an inbox notification for a session this server drives is checked at once (a cancel marker
 *   becomes `agent.cancel()`, L7; new input is remembered and re-checked when the drive ends, so input
 *   queued between the agent's last inbox read and its lease release is not stranded). Any other inbox
 *   notification, the periodic sweep and a listener `resync` all lead to one coalesced claim pass.
 *   Notifications only accelerate; the sweep alone would be enough (lost notifications, lapsed owners).
 * - A session whose lease another live owner holds is never claimed (that owner sees the input; if it dies
 *   its lease lapses and a later claim takes the session, whose Agent repairs the interrupted turn, R1).
 * - Idle sessions hold nothing: no lease. Idle agents stay cached (LRU) up to `maxSessions`; an agent whose
 *   drive failed (a lost lease, a failed flush) is dropped, since its memory may hold unflushed events.
 * - `stop()` (SIGTERM): stop claiming, let in-flight turns finish within a grace period, then cancel the
 *   rest (turn ends `aborted`, honestly closed, L7/L8), keeping their pending inbox for another server;
 *   each Agent releases its lease when its drive ends.
 */
import type { Agent } from "../loop/agent.js";
import { type Store, type StoreNotification, sessionLeaseName } from "../store/store.js";
import { isCancelMarker } from "./cancel-marker.js";

export type SessionRunnerOptions = {
  store: Store;
  /** This server's lease owner id. */
  owner: string;
  /** Creates the Agent of an existing session (the standard preset, `openAgent`). */
  open: (sessionId: string) => Promise<Agent>;
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
  /** Whether an idle agent may be evicted (false while it has running background jobs, T9). */
  evictable?: (agent: Agent) => boolean;
};

type Entry = {
  agent: Promise<Agent>;
  /** The agent once opened. */
  opened?: Agent;
  /** Resolves when the current drive (and any re-kick) ends; undefined when idle. */
  running: Promise<void> | undefined;
  notifiedWhileRunning: boolean;
  lastUsed: number;
};

export class SessionRunner {
  private readonly entries = new Map<string, Entry>();
  private running = 0;
  private unsubscribe: (() => void) | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  /** A claim pass filled every free slot (or was skipped for want of one): more work may be waiting. */
  private full = false;
  private stopping = false;

  constructor(private readonly options: SessionRunnerOptions) {}

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
    this.sweepTimer = setInterval(() => void this.sweep(), this.options.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  /** The session's agent on this server (opened on first use); for routes that act on it (cancel, goals). */
  agent(sessionId: string): Promise<Agent> {
    return this.entry(sessionId).agent;
  }

  /** The cached agent, if this server has one (it may or may not be driving). */
  cachedAgent(sessionId: string): Promise<Agent> | undefined {
    return this.entries.get(sessionId)?.agent;
  }

  /** The session's inbox changed: check it if it drives here, else look for work to claim. */
  async wake(sessionId: string): Promise<void> {
    if (this.stopping) return;
    const existing = this.entries.get(sessionId);
    if (existing?.running) {
      const pending = await this.options.store.pendingInbox(sessionId);
      if (pending.some(isCancelMarker))
        await (await existing.agent).cancel(); // L7, asked on another server
      else existing.notifiedWhileRunning = true;
      return;
    }
    await this.sweep();
  }

  /** One claim pass (coalesced: a call during a pass makes the pass run once more). */
  sweep(): Promise<void> {
    if (this.claiming) {
      this.claimAgain = true;
      return this.claiming;
    }
    this.claiming = (async () => {
      try {
        do {
          this.claimAgain = false;
          await this.claim();
        } while (this.claimAgain && !this.stopping);
      } catch (error) {
        this.options.onError?.(error);
      } finally {
        this.claiming = undefined;
      }
    })();
    return this.claiming;
  }

  /** Graceful shutdown: no new work; finish or cancel in-flight turns; leases are released by each drive. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    await this.claiming;
    const running = [...this.entries.values()].flatMap((e) => (e.running ? [e.running] : []));
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.options.shutdownGraceMs);
    });
    const outcome = await Promise.race([Promise.all(running).then(() => "done" as const), grace]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      for (const entry of this.entries.values()) {
        if (!entry.running) continue;
        const agent = await entry.agent;
        await agent.cancel({ keepInbox: true }); // L7: aborted honestly; the inbox stays for another server
      }
    }
    await Promise.all([...this.entries.values()].map((e) => e.running));
    await Promise.all(
      [...this.entries.values()].map((e) => e.agent.then((a) => a.close()).catch(() => undefined)),
    );
    this.entries.clear();
  }

  private onNotification(notification: StoreNotification): void {
    if (this.stopping) return;
    if (notification.channel === "inbox") {
      this.wake(notification.sessionId).catch((error: unknown) =>
        this.options.onError?.(error, notification.sessionId),
      );
    } else if (notification.channel === "resync") {
      for (const entry of this.entries.values()) if (entry.running) entry.notifiedWhileRunning = true;
      void this.sweep();
    }
  }

  private async claim(): Promise<void> {
    const { store, owner, leaseTtlMs } = this.options;
    const room = this.room();
    this.full = room === 0;
    if (this.stopping || room === 0) return;
    const ids = await store.claimPendingSessions(owner, leaseTtlMs, room);
    this.full = ids.length === room;
    for (const id of ids) {
      if (this.stopping || this.entries.get(id)?.running || !this.makeRoom(id)) {
        await this.release(id);
        continue;
      }
      this.drive(id);
    }
  }

  /** Free driving slots (cached idle agents are evicted as needed, see makeRoom). */
  private room(): number {
    return Math.max(0, this.options.maxRunning - this.running);
  }

  private entry(sessionId: string): Entry {
    let entry = this.entries.get(sessionId);
    if (!entry) {
      const opened = this.options.open(sessionId);
      const created: Entry = {
        agent: opened,
        running: undefined,
        notifiedWhileRunning: false,
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

  /** Drives a session whose lease this server has just claimed. */
  private drive(sessionId: string): void {
    const entry = this.entry(sessionId);
    this.running++;
    entry.notifiedWhileRunning = false;
    const run = (async () => {
      // Claimed with no one driving: a cancel marker left in the inbox came too late to matter.
      const pending = await this.options.store.pendingInbox(sessionId);
      const markers = pending.filter(isCancelMarker);
      if (markers.length)
        await this.options.store.discardInbox(
          sessionId,
          markers.map((m) => m.id),
        );
      const agent = await entry.agent;
      let failed = false;
      do {
        entry.notifiedWhileRunning = false;
        agent.kick();
        try {
          await agent.whenIdle();
        } catch (error) {
          failed = true;
          this.options.onError?.(error, sessionId);
        }
      } while (
        !failed &&
        !this.stopping &&
        entry.notifiedWhileRunning &&
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
    return pending.some((item) => item.mode !== "inject");
  }

  /** An agent whose drive failed may hold unflushed events: never reuse it. */
  private drop(sessionId: string, entry: Entry): void {
    if (this.entries.get(sessionId) !== entry) return;
    this.entries.delete(sessionId);
    void entry.agent.then((agent) => agent.close()).catch(() => undefined);
  }

  /** Makes space for `sessionId`'s agent: evicts the least recently used idle agent when at the cap. */
  private makeRoom(sessionId: string): boolean {
    if (this.entries.has(sessionId) || this.entries.size < this.options.maxSessions) return true;
    let oldest: [string, Entry] | undefined;
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
