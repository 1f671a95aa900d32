/**
 * The child driver of a process without a session runner (`bdsh run`, `bdsh chat`, a library embedding):
 * children are opened and driven in this process, and a parent of this process is woken here (S1, S3).
 * `bdsh serve` uses its runner instead (src/server/plugin.ts), so any server may drive a child.
 *
 * Invariants:
 * - One agent per child, opened on its first wake and kept until `close`; a wake of a running agent makes
 *   it look at its inbox again after its turn (Agent.kick is idempotent).
 * - The agents of this process that are not children (the ones `adopt`ed) are kicked, never reopened.
 * - A child that cannot be opened is reported to `onError` and settles nothing; its parent's wait for it
 *   ends when `close` is called or the child is driven elsewhere.
 * - A cancel another process asked for (Hermes `cancel` from anywhere: a request row in the store) reaches a
 *   child driven here: while children are open, their inbox notifications (and `resync`, another process's
 *   commit) make this process take the child's cancel requests and cancel it, as a server's runner does.
 */
import type { Agent } from "../loop/agent.js";
import type { SessionDirectory } from "../store/store.js";
import type { ChildDriver } from "./lifecycle.js";

export class LocalChildren implements ChildDriver {
  private readonly adopted = new Map<string, Agent>();
  private readonly children = new Map<string, Promise<Agent>>();
  private closed = false;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: SessionDirectory,
    private readonly open: (sessionId: string) => Promise<Agent>,
    private readonly onError: (error: unknown, sessionId: string) => void = () => undefined,
  ) {}

  /** An agent this process already drives (the top-level one): woken by kicking it. */
  adopt(agent: Agent): void {
    this.adopted.set(agent.sessionId, agent);
  }

  wake(sessionId: string): void {
    if (this.closed) return;
    const own = this.adopted.get(sessionId);
    if (own) {
      own.kick();
      return;
    }
    let child = this.children.get(sessionId);
    if (!child) {
      child = this.open(sessionId);
      this.children.set(sessionId, child);
      this.watchCancels();
      child.catch((error: unknown) => {
        this.children.delete(sessionId);
        this.onError(error, sessionId);
      });
    }
    child.then((agent) => agent.kick()).catch(() => undefined);
  }

  async cancel(sessionId: string): Promise<void> {
    const agent = this.adopted.get(sessionId) ?? (await this.children.get(sessionId)?.catch(() => undefined));
    if (agent) await agent.cancel();
    // Driven by another process (or not yet opened): the request reaches whoever drives it.
    else await this.store.requestCancel(sessionId);
  }

  /** Cancel requests for the children driven here, from any process, become `agent.cancel()`. */
  private watchCancels(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.store.subscribe((n) => {
      if (n.channel === "inbox" && n.cancel) void this.cancelIfAsked(n.sessionId);
      else if (n.channel === "resync") for (const id of this.children.keys()) void this.cancelIfAsked(id);
    });
  }

  private async cancelIfAsked(sessionId: string): Promise<void> {
    const child = this.children.get(sessionId);
    if (!child || this.closed) return;
    try {
      if ((await this.store.takeCancelRequests(sessionId)) === 0) return;
      await (await child).cancel();
    } catch (error) {
      this.onError(error, sessionId);
    }
  }

  /** Waits for the children's turns, then closes them (jobs killed, terminals cleaned up). */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    const agents = await Promise.all([...this.children.values()].map((c) => c.catch(() => undefined)));
    await Promise.all(agents.map((agent) => agent?.close().catch(() => undefined)));
    this.children.clear();
  }
}
