/**
 * Which sessions this server drives (issue 8 items 3 and 4; L4, L16, R1; ARCHITECTURE "Storage").
 *
 * Invariants:
 * - Ownership is the session lease, taken by the Agent itself when it drives (`session:<id>`, renewed by
 *   heartbeat, fenced appends). The runner only decides *when to try*: it never writes to a log.
 * - Wake-ups: an inbox notification for a session with pending turn input, and a periodic sweep of
 *   `sessionsWithPendingInbox` (a lost notification, or an owner whose lease lapsed), and a `resync` from the
 *   listener (it reconnected: notifications may have been lost) all lead to the same `wake(id)`.
 *   Notifications only accelerate; the sweep alone would be enough.
 * - A session whose lease another live owner holds is skipped (that owner sees the input; if it dies its
 *   lease lapses and a later sweep takes the session, whose Agent repairs the interrupted turn, R1).
 * - A notification that arrives while the local agent drives is remembered and re-checked when the drive
 *   ends, so input queued between the agent's last inbox read and its lease release is not stranded.
 * - Idle sessions hold nothing: no lease. Idle agents stay cached (LRU) up to `maxSessions`; an agent whose
 *   drive failed (a lost lease, a failed flush) is dropped, since its memory may hold unflushed events.
 * - `stop()` (SIGTERM): stop waking, let in-flight turns finish within a grace period, then cancel the
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
  /** Agents kept in memory, running or idle. At the cap a new session is left to other servers. */
  maxSessions: number;
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
  private unsubscribe: (() => void) | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
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
    let running = 0;
    for (const entry of this.entries.values()) if (entry.running) running++;
    return { cached: this.entries.size, running };
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

  /** Try to drive the session if it has pending turn input and nobody else holds it. */
  async wake(sessionId: string): Promise<void> {
    if (this.stopping) return;
    const { store } = this.options;
    const pending = await store.pendingInbox(sessionId);
    const markers = pending.filter(isCancelMarker);
    const existing = this.entries.get(sessionId);
    if (existing?.running) {
      if (markers.length)
        await (await existing.agent).cancel(); // L7, asked on another server
      else existing.notifiedWhileRunning = true;
      return;
    }
    const holder = await store.getLease(sessionLeaseName(sessionId));
    if (holder && holder.owner !== this.options.owner) return; // its holder will see the input
    if (markers.length) {
      // Nothing runs the session any more: the cancel came too late to matter.
      await store.discardInbox(
        sessionId,
        markers.map((m) => m.id),
      );
    }
    if (!pending.some((item) => item.mode !== "inject")) return;
    if (!existing && !this.makeRoom()) return; // at capacity: another server, or a later sweep
    this.drive(sessionId);
  }

  /** Claims work whose notification was lost or whose owner died (its lease lapsed). */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        const ids = await this.options.store.sessionsWithPendingInbox(this.options.maxSessions);
        for (const id of ids) {
          if (this.stopping) break;
          await this.wake(id).catch((error: unknown) => this.options.onError?.(error, id));
        }
      } catch (error) {
        this.options.onError?.(error);
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }

  /** Graceful shutdown: no new work; finish or cancel in-flight turns; leases are released by each drive. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    await this.sweeping;
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

  private drive(sessionId: string): void {
    const entry = this.entry(sessionId);
    if (entry.running) return;
    entry.notifiedWhileRunning = false;
    const run = (async () => {
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
      if (failed) this.drop(sessionId, entry);
    })();
    entry.running = run;
    run
      .catch((error: unknown) => {
        this.options.onError?.(error, sessionId);
        this.drop(sessionId, entry);
      })
      .finally(() => {
        if (entry.running === run) entry.running = undefined;
      });
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

  /** Evicts the least recently used idle agent when at the cap; false when every agent is busy. */
  private makeRoom(): boolean {
    if (this.entries.size < this.options.maxSessions) return true;
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
