/**
 * The driver: one per session, the only place with loop logic (L1–L19, R1). Behaviour beyond the loop is
 * added by plugins on hooks (./hooks.ts), never by branches here.
 *
 * Invariants:
 * - The driver writes only while it holds the session's lease (`session:<id>`, renewed by heartbeat); every
 *   append is fenced by it. Idle sessions hold nothing: the lease is released when no input is pending.
 * - On taking the lease it reads the log and closes a turn left open by a crash (R1); it never re-runs it.
 * - Input arrives only through the durable inbox (L4); it is claimed in the same transaction that appends
 *   its `user/message`, so it is consumed exactly once even across servers.
 * - A turn always ends with `turn/end` (finally). A step ends on a reply without tool calls unless next-step
 *   input is pending; `agent/turn-stopping` runs first and may keep it open (L5). No step budget (L3).
 * - The log is flushed on pre-step and before every request (committed), and to disk before every dispatch
 *   of a call that is not read-only and at every turn's end (L17, and its "Here:": servers are disposable,
 *   the world is not).
 * - Cancel keeps the visible prefix, drops tool calls, closes undispatched calls (L7, L8); a failing step
 *   closes every unanswered call (L9). A plugin or pipeline failure ends the turn, not the agent (L15).
 */
import { HookBus } from "../hooks/hook-bus.js";
import type {
  ErrorInfo,
  EventType,
  InboxItemRecord,
  LogEvent,
  MessageAbout,
  NewEvent,
  TurnEndReason,
} from "../log/events.js";
import type { AssistantBlock, ToolCallBlock } from "../log/messages.js";
import { Redactor } from "../log/redact.js";
import { abortableSleep } from "../model/retry.js";
import { collectReply, LlmError, type ModelAdapter, type ModelPart } from "../model/types.js";
import { type HeldLease, holdLease } from "../store/hold-lease.js";
import type { DriveRead, InboxItem, NewInboxItem, SessionRow, Store } from "../store/store.js";
import { sessionLeaseName } from "../store/store.js";
import { ToolRegistry } from "../tools/registry.js";
import type {
  ApprovalPolicy,
  SandboxMode,
  ToolCallRequest,
  ToolExec,
  ToolSessionInfo,
} from "../tools/types.js";
import type { PendingUserMessage } from "./hooks.js";
import { traced } from "./trace-carrier.js";
import "./hooks.js";
import { opensTurn } from "../store/store.js";
import { AgentTools, type AgentToolsControl } from "./agent-tools.js";
import { storeCapability } from "./capabilities.js";
import { InboxView } from "./inbox-view.js";
import type { ModelSettings } from "./model-settings.js";
import {
  createServiceRegistry,
  type ExclusiveOptions,
  type Plugin,
  type PluginApiMap,
  type PluginContext,
  type PluginLog,
  type RuntimeFacts,
  type ServiceRegistry,
  UndeclaredCapabilityError,
} from "./plugin.js";
import { PromptRegistry } from "./prompt.js";
import { abortedBeforeDispatch, closeUnansweredCalls, interruptedTurnClosers } from "./recovery.js";
import { RequestBuilder } from "./request-builder.js";
import { runToolBatch } from "./scheduler.js";
import { SessionLog } from "./session-log.js";
import { type ToolHost, toolCallRequest } from "./tool-host.js";

export type AgentOptions = {
  store: Store;
  sessionId: string;
  /** Lease owner id: this process or server. */
  owner: string;
  adapter: ModelAdapter;
  model: ModelSettings;
  /**
   * A tool host that stands in for the agent's registry and pipeline: the loop driven with a table of
   * functions (the loop's own tests, the loop benchmark). With one, a plugin that registers a tool fails.
   */
  tools?: ToolHost;
  plugins?: readonly Plugin[];
  /** The environment tools' availability is checked against (required env vars); default process.env. */
  env?: NodeJS.ProcessEnv;
  workspace: string;
  /** Working directory (default: the workspace). */
  cwd?: string;
  sandbox?: SandboxMode;
  approval?: ApprovalPolicy;
  session?: Partial<ToolSessionInfo>;
  maxParallelTools?: number;
  leaseTtlMs?: number;
  /** How long to wait for another holder's lease to lapse before giving up (default 0: do not wait). */
  leaseWaitMs?: number;
  now?: () => Date;
  /** Known secret values, redacted from every event before it is stored or sent. */
  redactor?: Redactor;
  /** The session row the opener has just read: plugins setting up read it, not the store (see `setup`). */
  sessionRow?: SessionRow;
};

/** What the claim that took a session's lease read for its drive (Store `enqueueAndClaim`): the events after `after`. */
export type ClaimedRead = { after: number; read: DriveRead };

export type LiveDelta = { type: "text" | "reasoning"; delta: string; turn: number; step: number };
/** A step's reply streamed so far (see `Agent.liveReply`). */
export type LiveReply = { turn: number; step: number; text: string; reasoning: string };

class TurnAborted extends Error {
  constructor() {
    super("turn aborted");
  }
}

/** `exclusive` found the session's lease held by another process (it drives the session now). */
export class SessionBusyError extends Error {
  readonly code = "SESSION_BUSY";
  constructor(sessionId: string) {
    super(`session ${sessionId} is being driven by another process`);
  }
}

export class Agent {
  readonly hooks = new HookBus();
  readonly prompt = new PromptRegistry();
  /** The services the tools are given (`ToolExec.services`). */
  readonly services: ServiceRegistry = createServiceRegistry();
  /** What plugins provide each other (`PluginContext.provide`), by name. */
  private readonly apis = new Map<string, unknown>();
  /** The agent's one tool registry and pipeline; plugins register into it while they are set up. */
  readonly tools: AgentToolsControl;
  private readonly ownTools: AgentTools;
  readonly log: SessionLog;
  /** Mutable facts (cwd, sandbox, approval); a change reaches the model as runtime context (L13). */
  readonly facts: RuntimeFacts;
  status: "idle" | "running" = "idle";

  private readonly store: Store;
  private readonly request: RequestBuilder;
  private driving: Promise<void> | undefined;
  private kickAgain = false;
  private turnAbort: AbortController | undefined;
  private readonly nextStepLocal: PendingUserMessage[] = [];
  private readonly deltaListeners = new Set<(delta: LiveDelta) => void>();
  /** The text and reasoning streamed so far by the attempt in flight (what `onDelta` listeners were given). */
  private streamed: LiveReply | undefined;
  private lastError: unknown;
  /** What this agent knows of its pending inbox rows, read only when they may have changed (L4). */
  private readonly inbox = new InboxView();
  /**
   * The session row as just read by someone else, for `sessionRecord.read()` at the moments that follow
   * the read, which then costs nothing: the opener's row (`AgentOptions.sessionRow`) while the plugins set
   * up, and the drive's (read with the log and the inbox on taking the lease) in its first step's pre-step
   * (the archived guard, the title). Later reads go to the store.
   */
  private sessionSnapshot: SessionRow | undefined;
  private setupDone: Promise<void> | undefined;
  /** `drain`: the drive ends after the running turn; input left pending is for whichever server claims it. */
  private draining = false;
  /** The running turn is being cancelled by `cancel({ handover })`. */
  private handingOver = false;

  constructor(private readonly options: AgentOptions) {
    this.store = options.store;
    this.sessionSnapshot = options.sessionRow;
    // S1: a delegated child (spawned or forked by a parent agent) has approval pinned to never.
    const delegated = (options.session?.depth ?? 0) > 0;
    this.facts = {
      cwd: options.cwd ?? options.workspace,
      sandbox: options.sandbox ?? "workspace-write",
      approval: delegated ? "never" : (options.approval ?? "ask"),
      delegated,
    };
    this.log = new SessionLog(options.store, options.sessionId, options.owner, options.now, options.redactor);
    this.ownTools = new AgentTools(this.hooks, (name, section) =>
      this.prompt.addSection({ name: `tool:${name}`, ...section, visibleWith: name }),
    );
    this.tools = options.tools ? fixedHostTools(options.tools) : this.ownTools;
    this.request = new RequestBuilder(this.log, this.prompt, () => this.toolHost, options.model);
    this.prompt.setVariable("model", options.model.id);
    this.prompt.setVariable("provider", options.model.provider);
  }

  /** The tool host: the agent's own registry and pipeline, or the one given in the options. */
  private get toolHost(): ToolHost {
    return this.options.tools ?? this.ownTools;
  }

  get sessionId(): string {
    return this.options.sessionId;
  }

  /** Runs every plugin's setup once, in order. */
  setup(): Promise<void> {
    this.setupDone ??= (async () => {
      const session = this.sessionInfo();
      for (const plugin of this.options.plugins ?? []) await plugin.setup(this.contextFor(plugin, session));
      this.sessionSnapshot = undefined; // the opener's row served the setup; later reads are fresh
      if (!this.options.tools)
        await this.ownTools.decide({
          env: this.options.env ?? process.env,
          services: this.services,
          session,
        });
      await this.hooks.serial("agent/ready", { sessionId: this.sessionId });
    })();
    return this.setupDone;
  }

  /** What one plugin is given: the shared context, and only the capabilities and APIs it declared. */
  private contextFor(plugin: Plugin, session: ToolSessionInfo): PluginContext {
    const needs = new Set<string>(plugin.needs ?? []);
    const uses = new Set<string>(plugin.uses ?? []);
    return {
      sessionId: this.sessionId,
      session,
      sessionRecord: {
        read: async () => this.sessionSnapshot ?? (await this.store.getSession(this.sessionId)),
        setTitle: async (title) => {
          this.sessionSnapshot = undefined;
          await this.store.updateSession(this.sessionId, { title });
        },
      },
      hooks: this.hooks,
      prompt: this.prompt,
      services: this.services,
      log: this.log,
      tools: this.tools,
      inbox: {
        followup: (text, source, about) => this.followup(text, source, about),
        steer: (text, source, about) => this.steer(text, source, about),
        inject: (text, source, about) => this.inject(text, source, about),
        // A fresh read: a plugin deciding whether input waits (a goal round, a child's settlement) must see
        // what another process queued even when its notification has not arrived.
        pending: () => this.store.pendingInbox(this.sessionId),
        changed: () => {
          this.inbox.markChanged(); // whoever starts the next drive (the caller's kick, a runner) reads it
        },
        discard: (ids) => {
          this.inbox.markChanged();
          return this.store.discardInbox(this.sessionId, ids);
        },
        watch: (listener) =>
          this.store.subscribe(
            (n) => {
              if (n.channel === "resync" || (n.channel === "inbox" && n.sessionId === this.sessionId))
                listener();
            },
            { sessionId: this.sessionId },
          ),
      },
      model: this.options.model,
      adapter: this.options.adapter,
      currentRequest: (signal) => this.request.build(signal ?? new AbortController().signal),
      currentTools: () => this.request.tools,
      workspace: this.options.workspace,
      facts: this.facts,
      redactor: this.options.redactor ?? Redactor.none,
      onDelta: (listener) => this.onDelta(listener),
      exclusive: (fn, options) => this.exclusive(fn, options),
      fold: (types, fold) => foldEvents(this.log, types, fold),
      capability: (name) => {
        if (!needs.has(name)) throw new UndeclaredCapabilityError(plugin.name, "needs", name);
        return storeCapability(this.store, name);
      },
      provide: (name, api) => {
        this.apis.set(name, api);
      },
      use: (name) => {
        if (!uses.has(name)) throw new UndeclaredCapabilityError(plugin.name, "uses", name);
        return this.apis.get(name) as never;
      },
    };
  }

  /**
   * A plugin's API (goals, plan mode, compaction, …) for the agent's owner; undefined when no plugin of
   * this agent offers it. Products reach them through methods (presets/standard-agent.ts).
   */
  api<K extends keyof PluginApiMap>(name: K): PluginApiMap[K] | undefined {
    return this.apis.get(name) as PluginApiMap[K] | undefined;
  }

  // ---- input (L4) ----

  /** Next turn; wakes the agent. */
  followup(text: string, source: InboxItem["source"] = "human", about?: MessageAbout): Promise<InboxItem> {
    return this.enqueue(
      { queue: "next-turn", mode: "followup", source, text, ...aboutMetadata(about) },
      true,
    );
  }

  /** Next step of the running turn (or a new turn when idle); wakes the agent. */
  steer(text: string, source: InboxItem["source"] = "human", about?: MessageAbout): Promise<InboxItem> {
    return this.enqueue({ queue: "next-step", mode: "steer", source, text, ...aboutMetadata(about) }, true);
  }

  /** Next step, without waking an idle agent. */
  inject(
    text: string,
    source: InboxItem["source"] = "tool-context",
    about?: MessageAbout,
  ): Promise<InboxItem> {
    return this.enqueue({ queue: "next-step", mode: "inject", source, text, ...aboutMetadata(about) }, false);
  }

  private async enqueue(item: NewInboxItem, wake: boolean): Promise<InboxItem> {
    const stored = await this.store.enqueueInbox(this.sessionId, traced(item));
    this.inbox.markChanged(); // L4: our own addition
    if (wake) this.kick();
    return stored;
  }

  /**
   * L7: aborts the running turn. The pending inbox is cleared unless `keepInbox`. `handover`: the turn is
   * cancelled to hand the session to another server (a graceful stop), which no person asked for: plugins
   * see it on `agent/turn-end` (a goal is not paused by it).
   */
  async cancel(options: { keepInbox?: boolean; handover?: boolean } = {}): Promise<void> {
    if (options.handover) this.handingOver = true;
    if (!options.keepInbox) {
      this.inbox.markChanged();
      const pending = await this.store.pendingInbox(this.sessionId);
      if (pending.length)
        await this.store.discardInbox(
          this.sessionId,
          pending.map((p) => p.id),
        );
    }
    this.turnAbort?.abort();
  }

  /**
   * How many reads of the pending inbox rows this agent has begun. A read begun after an inbox notification
   * arrived sees that input: the server's runner compares this count to skip a look of its own.
   */
  get inboxReads(): number {
    return this.inbox.reads;
  }

  /** The seq of the last event this agent holds (read or added): a claim reads only the events after it. */
  get loggedSeq(): number {
    return this.log.seq;
  }

  /** Whether this drive has already read the inbox row `id`. */
  hasSeenInboxItem(id: string): boolean {
    return this.inbox.hasSeen(id);
  }

  /**
   * The inbox changed (the server heard a notification): the next look reads the rows, unless all that is
   * known is that row `itemId` was added and this drive has read it already (InboxView).
   */
  inboxChanged(itemId?: string): void {
    this.inbox.announced(itemId);
  }

  /**
   * Starts driving if input is pending (idempotent). `claimedAt`: the caller (the server's runner) took the
   * session lease for this owner at that `Date.now()`; a drive that starts now adopts it (holdLease
   * `claimedAt`) instead of acquiring it again. A kick that only marks another drive due drops it: the
   * running drive or exclusive section releases the lease when it ends, and the next drive acquires anew.
   */
  kick(claimedAt?: number, claimedRead?: ClaimedRead): void {
    if (this.driving) {
      this.kickAgain = true;
      return;
    }
    if (claimedRead) {
      // The inbox as the claim read it, before anything heard since (inboxChanged) is applied to it.
      this.inbox.beginRead();
      this.inbox.read(claimedRead.read.pending);
    }
    this.driving = this.drive(claimedAt, claimedRead).finally(() => {
      this.driving = undefined;
      if (this.kickAgain) {
        this.kickAgain = false;
        this.kick();
      }
    });
  }

  /** Resolves when the agent has no turn running and nothing to start. */
  async whenIdle(): Promise<void> {
    while (this.driving) await this.driving;
    if (this.lastError) {
      const error = this.lastError;
      this.lastError = undefined;
      throw error;
    }
  }

  /** R1 without new input: takes the lease, closes an interrupted turn, releases. */
  async open(): Promise<void> {
    this.kick();
    await this.whenIdle();
  }

  /**
   * L1: a write outside a drive (a title that arrived after the turn, `/compact`) goes through the agent's
   * own log under the session lease, never beside it. Waits for this agent's drive to end (a kick meanwhile
   * waits for the section), takes the lease (waiting up to `waitMs`), reads what others appended, runs `fn`
   * with the log and a signal that aborts when the lease is lost, flushes and releases. Throws
   * `SessionBusyError` when another process holds the lease. Never call it from a hook of this agent: the
   * drive that runs the hook is what it waits for.
   */
  async exclusive<T>(
    fn: (log: PluginLog, signal: AbortSignal) => Promise<T>,
    options: ExclusiveOptions = {},
  ): Promise<T> {
    await this.setup();
    for (let current = this.driving; current; current = this.driving) await current.catch(() => undefined);
    let finish!: () => void;
    const section = new Promise<void>((resolve) => {
      finish = resolve;
    });
    this.driving = section.finally(() => {
      this.driving = undefined;
      if (this.kickAgain) {
        this.kickAgain = false;
        this.kick();
      }
    });
    try {
      const held = await holdLease(
        this.store,
        sessionLeaseName(this.sessionId),
        this.options.owner,
        options.ttlMs ?? this.options.leaseTtlMs ?? 10_000,
        { waitMs: options.waitMs ?? 0 },
      );
      if (!held) throw new SessionBusyError(this.sessionId);
      try {
        await this.log.load();
        const value = await fn(this.log, held.signal);
        await held.releaseBy(() =>
          this.log.flush({ durability: options.durability ?? "disk", releaseLease: true }),
        );
        return value;
      } finally {
        await held.release(); // after releaseBy, nothing more; after a throw, lets go
      }
    } finally {
      finish();
    }
  }

  /**
   * A graceful stop: no new turn starts here (a goal round or message already queued stays in the inbox for
   * the server that takes the session over); the running turn may finish.
   */
  drain(): void {
    this.draining = true;
  }

  /** Waits for the current run, then lets plugins stop background work (jobs, terminals). */
  async close(): Promise<void> {
    await this.whenIdle().catch(() => undefined);
    await this.hooks.serial("agent/close", { sessionId: this.sessionId });
  }

  onDelta(listener: (delta: LiveDelta) => void): () => void {
    this.deltaListeners.add(listener);
    return () => this.deltaListeners.delete(listener);
  }

  /**
   * The reply being streamed, so far (redacted like the deltas), for a watcher that attaches mid-stream: read
   * it and subscribe with `onDelta` in the same tick and nothing is missed or doubled. Undefined between
   * replies; cleared as soon as the attempt's stream ends (its message follows in the log).
   */
  liveReply(): LiveReply | undefined {
    return this.streamed ? { ...this.streamed } : undefined;
  }

  // ---- driving ----

  private async drive(claimedAt?: number, claimedRead?: ClaimedRead): Promise<void> {
    await this.setup();
    // L1: one driver per session; a lost lease stops the turn at its next check (appends are fenced anyway).
    const held = await holdLease(
      this.store,
      sessionLeaseName(this.sessionId),
      this.options.owner,
      this.options.leaseTtlMs ?? 10_000,
      { waitMs: this.options.leaseWaitMs ?? 0, ...(claimedAt === undefined ? {} : { claimedAt }) },
    );
    if (!held) return; // another process drives this session; it will see the input.
    const unsubscribe = this.store.subscribe(
      (notification) => {
        if (notification.channel === "resync") this.inbox.markChanged();
        else if (notification.channel === "inbox" && notification.sessionId === this.sessionId)
          this.inboxChanged(notification.itemId);
      },
      // The read below comes after this subscription: no resync merely for subscribing.
      { sessionId: this.sessionId, initialResync: false },
    );
    try {
      // The log, the pending input and the session row in one read (L1: up to date on taking the lease). A
      // notification that lands while it is in flight marks the inbox dirty again, for the next look. A
      // claim that read them already (Store.enqueueAndClaim) serves if its events reach the row's last seq.
      if (claimedRead && this.log.acceptClaimed(claimedRead.after, claimedRead.read)) {
        this.sessionSnapshot = claimedRead.read.session;
      } else {
        this.inbox.beginRead();
        const { pending, session } = await this.log.loadForDrive();
        this.inbox.read(pending);
        this.sessionSnapshot = session;
      }
      await this.repair();
      const go = () => !held.signal.aborted && !this.draining;
      while (go()) {
        while (go() && (await this.hasTurnInput())) await this.runTurn(held.signal);
        if (this.status === "running") await this.becomeIdle();
        if (!(await this.hasTurnInput())) break;
      }
    } catch (error) {
      this.lastError = error;
    } finally {
      this.sessionSnapshot = undefined;
      this.inbox.forgetSeen();
      unsubscribe();
      await this.letGo(held);
    }
  }

  /**
   * The end of a drive: what is still buffered (the idle status, what the idle hooks added without
   * flushing) goes out in the append that also lets go of the lease, one round trip for both. A drive that
   * failed only releases: its buffer is not to be trusted (the runner drops this agent).
   */
  private async letGo(held: HeldLease): Promise<void> {
    // A lost lease is no reason to skip the append: fenced, it fails if the lease is really gone, and the
    // failure marks this agent's buffer as never stored (the runner drops the agent, R1 repairs the log).
    if (this.lastError !== undefined) return held.release();
    try {
      await held.releaseBy(() => this.log.flush({ durability: "commit", releaseLease: true }));
    } catch (error) {
      this.lastError = error;
    }
  }

  /** R1: close a turn a crash left open; the interrupted work is not re-run. */
  private async repair(): Promise<void> {
    const closers = interruptedTurnClosers(this.log.events);
    if (closers.length === 0) return;
    this.log.add(...closers);
    const turn = closers.find((e) => e.type === "turn/end")?.turn ?? 0;
    await this.hooks.serial("agent/repaired", { sessionId: this.sessionId, turn });
    await this.log.flush();
    // The closed turn ends in `idle` like any other, hook included (S3: a repaired child settles and its
    // parent is told).
    if (this.log.last("agent/status")?.data.status === "running") await this.becomeIdle();
  }

  /**
   * The turn's end was flushed to disk just before; the idle status is not flushed here. It goes out with
   * the next write: a hook's own flush (a goal round, a settled child, a title), the next turn's first
   * step, or the drive's last append, which also lets go of the lease (`letGo`).
   */
  private async becomeIdle(): Promise<void> {
    this.status = "idle";
    this.log.add({ type: "agent/status", data: { status: "idle" } });
    try {
      await this.hooks.serial("agent/status", { sessionId: this.sessionId, status: "idle" });
    } catch (error) {
      this.log.add({ type: "agent/error", data: errorData(error, "PLUGIN_FAILED") });
    }
  }

  /** Input that opens a turn: a follow-up or a steer (inject does not wake, L4). */
  private async hasTurnInput(): Promise<boolean> {
    if (this.nextStepLocal.length) return true;
    return opensTurn(await this.pending());
  }

  private async hasNextStepInput(): Promise<boolean> {
    if (this.nextStepLocal.length) return true;
    return (await this.pending()).some((item) => item.queue === "next-step");
  }

  /** The pending inbox rows, read again only when something said they changed (InboxView). */
  private async pending(): Promise<readonly InboxItem[]> {
    if (this.inbox.needsRead) {
      this.inbox.beginRead();
      this.inbox.read(await this.store.pendingInbox(this.sessionId));
    }
    return this.inbox.rows;
  }

  /** Takes inbox rows: their splice events are added, and the next flush consumes them (L1, L4). */
  private claim(items: readonly InboxItem[], turn: number, step?: number): void {
    if (items.length === 0) return;
    this.addClaimed(items, turn, step);
    this.log.claim(items.map((item) => item.id));
    this.inbox.claimed(items);
  }

  private async runTurn(leaseLost: AbortSignal): Promise<void> {
    const turn = (this.log.last("turn/start")?.turn ?? 0) + 1;
    const controller = new AbortController();
    const signal = AbortSignal.any([controller.signal, leaseLost]);
    this.turnAbort = controller;
    let reason: TurnEndReason = "completed";
    let error: ErrorInfo | undefined;
    let step = 0;
    let stepOpen = false;
    try {
      // L1: at a turn boundary, all pending next-step input plus one queued prompt.
      const pending = await this.pending();
      const firstPrompt = pending.find((item) => item.queue === "next-turn");
      const claimed = pending.filter((item) => item.queue === "next-step" || item === firstPrompt);
      if (this.status === "idle") {
        this.status = "running";
        this.log.add({ type: "agent/status", data: { status: "running" } });
        await this.hooks.serial("agent/status", { sessionId: this.sessionId, status: "running" });
      }
      this.log.add({ type: "turn/start", data: { trigger: firstPrompt?.mode ?? "steer" }, turn });
      this.request.ensureSystem({ turn });
      // The claim and these events become durable with step 1's pre-request flush (L17).
      this.claim(claimed, turn);
      await this.hooks.serial("agent/turn-start", { sessionId: this.sessionId, turn, claimed });

      let maxTokens = false;
      let keptOpen = 0;
      for (;;) {
        step++;
        stepOpen = false;
        const result = await this.runStep(turn, step, signal, () => {
          stepOpen = true;
        });
        stepOpen = false;
        if (typeof result === "object") {
          reason = "blocked";
          error = result.blocked;
          break;
        }
        if (result === "max-tokens") maxTokens = true; // sticky for the turn
        if (result === "continue") continue;
        if (await this.hasNextStepInput()) continue;
        const injected: PendingUserMessage[] = [];
        await this.hooks.serial("agent/turn-stopping", {
          sessionId: this.sessionId,
          turn,
          step,
          firstStepOfTurn: step === 1,
          result,
          lastBlocks: this.lastAssistantBlocks(),
          inject: (message) => injected.push(message),
          keptOpen,
        });
        if (injected.length) {
          keptOpen++;
          maxTokens = false; // M14: a continuation took up the cut reply; the turn ends by what follows
          this.nextStepLocal.push(...injected);
          continue;
        }
        if (!(await this.hasNextStepInput())) break;
      }
      if (reason === "completed" && maxTokens) reason = "max-tokens";
    } catch (caught) {
      const aborted = caught instanceof TurnAborted || signal.aborted;
      controller.abort(); // stop tools still running in a failed step
      if (aborted) {
        reason = "aborted";
      } else if (caught instanceof LlmError) {
        reason = "error";
        error = { code: caught.code, message: caught.message };
      } else {
        reason = "error";
        error = errorData(caught, "PLUGIN_FAILED");
        this.log.add({ type: "agent/error", data: error, turn });
      }
    } finally {
      this.turnAbort = undefined;
      if (stepOpen) {
        // L9: close every unanswered call before step/end.
        this.log.add(...closeUnansweredCalls(this.log.events, { turn, step }));
        this.log.add({
          type: "step/end",
          data: { result: reason === "aborted" ? "aborted" : "error" },
          turn,
          step,
        });
      }
      if (reason === "aborted") await this.discardPendingOnAbort(turn);
      this.log.add({ type: "turn/end", data: error ? { reason, error } : { reason }, turn });
      try {
        await this.log.flush(); // L17: a turn's end is on disk before its hooks run and anyone sees it
      } catch (flushError) {
        this.lastError ??= flushError; // lease lost: the next holder repairs the log (R1)
      }
    }
    try {
      const handover = reason === "aborted" && this.handingOver;
      this.handingOver = false;
      await this.hooks.serial("agent/turn-end", {
        sessionId: this.sessionId,
        turn,
        reason,
        ...(handover ? { handover } : {}),
      });
    } catch (hookError) {
      this.log.add({ type: "agent/error", data: errorData(hookError, "PLUGIN_FAILED") });
      await this.log.flush();
    }
  }

  /** L7: a cancel clears what was queued for this run (already discarded in the store by `cancel`). */
  private async discardPendingOnAbort(turn: number): Promise<void> {
    if (this.nextStepLocal.length === 0) return;
    const items: InboxItemRecord[] = this.nextStepLocal
      .splice(0)
      .map((m, i) => ({ id: `local-${turn}-${i}`, mode: "inject", source: m.source, text: m.text }));
    this.log.add({ type: "agent/inbox/spliced", data: { queue: "next-step", op: "clear", items }, turn });
  }

  private addClaimed(items: readonly InboxItem[], turn: number, step?: number): void {
    const where = step === undefined ? { turn } : { turn, step };
    for (const queue of ["next-turn", "next-step"] as const) {
      const taken = items.filter((item) => item.queue === queue);
      if (taken.length === 0) continue;
      this.log.add({
        type: "agent/inbox/spliced",
        data: {
          queue,
          op: "take",
          items: taken.map(({ id, mode, source, text }) => ({ id, mode, source, text })),
        },
        ...where,
      });
    }
    for (const item of items) {
      const about = aboutOf(item.metadata);
      this.log.add({
        type: "user/message",
        data: { text: item.text, source: item.source, inboxId: item.id, ...(about ? { about } : {}) },
        ...where,
      });
    }
  }

  private lastAssistantBlocks(): AssistantBlock[] {
    return this.log.last("assistant/message")?.data.blocks ?? [];
  }

  private async runStep(
    turn: number,
    step: number,
    signal: AbortSignal,
    opened: () => void,
  ): Promise<"continue" | "completed" | "max-tokens" | { blocked: ErrorInfo }> {
    const where = { turn, step };
    // Between steps the inbox is read only when a notification said it changed (notifications only
    // accelerate: anything missed here is still found at the turn's end, which always reads the rows).
    const claimed = step > 1 ? (await this.pending()).filter((i) => i.queue === "next-step") : [];
    const local = this.nextStepLocal.splice(0);
    const state = await this.hooks.waterfall("agent/pre-step", {
      sessionId: this.sessionId,
      turn,
      step,
      firstStepOfTurn: step === 1,
      messages: [],
    });
    this.sessionSnapshot = undefined; // read afresh from here on
    if (state.reject) {
      const blocked = { code: state.reject.code ?? "BLOCKED", message: state.reject.reason };
      this.log.add({ type: "agent/error", data: blocked, turn });
      return { blocked };
    }
    this.log.add({ type: "step/start", data: {}, ...where });
    opened();
    this.claim(claimed, turn, step);
    for (const message of [...local, ...state.messages]) {
      const { text, source, about } = message;
      this.log.add({ type: "user/message", data: { text, source, ...(about ? { about } : {}) }, ...where });
    }
    this.request.prepare(where, state.startsRequestSeries === true);
    // L17: before the request (it carries this turn's claims). Committed is enough here ("Here:"): a request
    // changes nothing in the world, and the next side-effecting dispatch flushes everything to disk.
    // `requestReply` waits for it before sending; meanwhile it makes the request (a store round trip is
    // time the request's own making can use).
    const flushed = this.log.flush({ durability: "commit" });
    flushed.catch(() => {}); // awaited in requestReply; this only keeps it from counting as unhandled first

    const reply = await this.requestReply(turn, step, signal, flushed);
    this.log.add({
      type: "assistant/message",
      data: {
        blocks: reply.blocks,
        provider: this.options.adapter.provider,
        model: this.options.model.id,
        finish: reply.finish,
        usage: reply.usage,
        ...(reply.droppedToolCalls ? { droppedToolCalls: reply.droppedToolCalls } : {}),
      },
      ...where,
    });
    // The reply becomes durable with the first side-effecting call's start record, or else with the next
    // pre-request flush (L17).
    const calls = reply.blocks.filter((b): b is ToolCallBlock => b.type === "tool-call");
    let result: "continue" | "completed" | "max-tokens";
    if (reply.finish === "max-tokens") result = "max-tokens";
    else if (calls.length === 0) result = "completed";
    else result = (await this.runTools(calls, turn, step, signal)) ? "completed" : "continue";
    this.log.add({ type: "step/end", data: { result }, ...where });
    return result;
  }

  /**
   * One reply, with the `agent/request-error` waterfall deciding retries on the same history (L10). Nothing
   * is sent before `durable` settles (L17); the adapter may make the first request while it has not.
   */
  private async requestReply(turn: number, step: number, signal: AbortSignal, durable: Promise<void>) {
    for (let attempt = 1; ; attempt++) {
      const draft = Object.freeze(this.request.build(signal));
      if (attempt === 1) {
        this.options.adapter.prepare?.(draft);
        await durable;
      }
      const { request } = await this.hooks.waterfall("agent/request", {
        sessionId: this.sessionId,
        turn,
        step,
        firstStepOfTurn: step === 1,
        request: draft,
      });
      // Live deltas pass the session's redactor too; a secret split across chunks is held until whole.
      const live = {
        text: (this.options.redactor ?? Redactor.none).stream(),
        reasoning: (this.options.redactor ?? Redactor.none).stream(),
      };
      const streamed: LiveReply = { turn, step, text: "", reasoning: "" };
      this.streamed = streamed;
      const emit = (type: LiveDelta["type"], delta: string) => {
        if (delta === "") return;
        streamed[type] += delta;
        for (const listener of this.deltaListeners) listener({ type, delta, turn, step });
      };
      const onPart = (part: ModelPart) => {
        if (part.type === "text" || part.type === "reasoning")
          emit(part.type, live[part.type].push(part.delta));
      };
      const flushLive = () => {
        emit("reasoning", live.reasoning.flush());
        emit("text", live.text.flush());
      };
      try {
        const reply = await collectReply(this.options.adapter.stream(Object.freeze(request)), onPart);
        flushLive();
        this.streamed = undefined;
        return reply;
      } catch (caught) {
        flushLive();
        this.streamed = undefined;
        if (signal.aborted) {
          this.keepInterruptedPrefix(caught, attempt, turn, step);
          throw new TurnAborted();
        }
        if (!(caught instanceof LlmError)) throw caught;
        // M16: the failed attempt is log-only.
        this.log.add({
          type: "assistant/attempt",
          data: { blocks: caught.partial, attempt, error: { code: caught.code, message: caught.message } },
          turn,
          step,
        });
        const decided = await this.hooks.waterfall("agent/request-error", {
          sessionId: this.sessionId,
          turn,
          step,
          firstStepOfTurn: step === 1,
          error: caught,
          attempt,
          signal,
          decision: { kind: "throw" },
          emit: (event: NewEvent) => {
            this.log.add({ ...event, turn, step } as NewEvent);
          },
        });
        if (decided.decision.kind !== "retry") throw caught;
        await this.log.flush({ durability: "commit" });
        try {
          await abortableSleep(decided.decision.delayMs, signal);
        } catch {
          throw new TurnAborted();
        }
        this.log.add({ type: "llm/retry-started", data: { attempt: attempt + 1 }, turn, step });
      }
    }
  }

  /** L7: keep the streamed text and reasoning as an interrupted message; drop tool calls. */
  private keepInterruptedPrefix(caught: unknown, attempt: number, turn: number, step: number): void {
    const partial = caught instanceof LlmError ? caught.partial : [];
    const kept = partial.filter((b) => b.type !== "tool-call" && b.text.trim().length > 0);
    if (kept.length > 0) {
      this.log.add({
        type: "assistant/message",
        data: {
          blocks: kept,
          provider: this.options.adapter.provider,
          model: this.options.model.id,
          finish: "aborted",
          interrupted: true,
        },
        turn,
        step,
      });
    } else if (partial.length > 0) {
      this.log.add({
        type: "assistant/attempt",
        data: { blocks: partial, attempt, error: { code: "ABORTED", message: "cancelled" } },
        turn,
        step,
      });
    }
  }

  /** L19 + T15: runs the calls; returns true when a tool concluded the turn. */
  private async runTools(
    calls: ToolCallBlock[],
    turn: number,
    step: number,
    signal: AbortSignal,
  ): Promise<boolean> {
    const where = { turn, step };
    let concluded = false;
    const contexts: PendingUserMessage[] = [];
    // When each call's body started, for `durationMs` on its result (the views show how long it ran).
    const started = new Map<string, number>();
    // Each call's request (its arguments parsed) is made once and asked three times: class, read-only, run.
    const requests = new Map<ToolCallBlock, ToolCallRequest>();
    const requestOf = (call: ToolCallBlock): ToolCallRequest => {
      let request = requests.get(call);
      if (!request) {
        request = toolCallRequest(call.id, call.name, call.arguments);
        requests.set(call, request);
      }
      return request;
    };
    const { undispatched } = await runToolBatch({
      calls,
      maxParallel: this.options.maxParallelTools ?? 10,
      signal,
      classOf: (call) => this.toolHost.concurrencyOf(requestOf(call)),
      beforeDispatch: async (call) => {
        this.log.add({
          type: "tool/call",
          data: { callId: call.id, name: call.name, arguments: call.arguments },
          ...where,
        });
        // L17 "Here:": on disk before side-effecting tools. A read-only call starts at once; its record rides
        // the next flush, and a crash before it loses nothing but the read.
        if (!this.toolHost.isReadOnly?.(requestOf(call))) await this.log.flush();
      },
      run: (call) => {
        started.set(call.id, performance.now());
        return this.toolHost.run(
          requestOf(call),
          this.execFor(call, signal, () => {
            concluded = true;
          }),
        );
      },
      commit: (call, output) => {
        const start = started.get(call.id);
        this.log.add({
          type: "tool/result",
          data: {
            callId: call.id,
            name: call.name,
            text: output.text,
            ...(output.isError ? { isError: true } : {}),
            ...(output.code ? { code: output.code } : {}),
            ...(output.spill ? { spill: output.spill } : {}),
            ...(start === undefined ? {} : { durationMs: Math.round(performance.now() - start) }),
            // For people's views only: surfaceOf reads the text, never this (the session log redacts it too).
            ...(output.details ? { details: output.details } : {}),
          },
          ...where,
        });
        for (const text of output.additionalContexts ?? []) contexts.push({ text, source: "tool-context" });
      },
    });
    if (undispatched.length > 0) {
      for (const call of undispatched) this.log.add(...abortedBeforeDispatch(call, where));
    }
    if (signal.aborted) throw new TurnAborted();
    this.nextStepLocal.push(...contexts); // T15: after the results, in model order
    return concluded;
  }

  /** Which session this agent drives: its kind and delegation depth (S1), as plugins and tools see it. */
  private sessionInfo(): ToolSessionInfo {
    return {
      ...this.options.session,
      sessionId: this.sessionId,
      kind: this.options.session?.kind ?? "main",
      depth: this.options.session?.depth ?? 0,
    };
  }

  private execFor(call: ToolCallBlock, signal: AbortSignal, conclude: () => void): ToolExec {
    return {
      callId: call.id,
      toolName: call.name,
      session: this.sessionInfo(),
      workspace: this.options.workspace,
      cwd: this.facts.cwd,
      sandbox: this.facts.sandbox,
      approval: this.facts.approval,
      signal,
      concludeTurn: conclude,
      services: this.services,
    };
  }
}

/** `PluginContext.fold`: the events of `types` already in the log, then each one added or loaded. */
function foldEvents<K extends EventType>(
  log: SessionLog,
  types: readonly K[],
  fold: (event: Extract<LogEvent, { type: K }>) => void,
): () => void {
  const wanted: ReadonlySet<EventType> = new Set(types);
  const apply = (events: readonly LogEvent[]) => {
    for (const event of events) if (wanted.has(event.type)) fold(event as Extract<LogEvent, { type: K }>);
  };
  apply(log.events);
  return log.onEvents(apply);
}

function errorData(error: unknown, fallbackCode: string): ErrorInfo {
  const code =
    error && typeof error === "object" && "code" in error && typeof error.code === "string"
      ? error.code
      : fallbackCode;
  return { code, message: error instanceof Error ? error.message : String(error) };
}

/** An inbox row's metadata carrying what its message is about (`user/message.about`). */
function aboutMetadata(about: MessageAbout | undefined): { metadata?: Record<string, unknown> } {
  return about ? { metadata: { about } } : {};
}

/** `about` back from an inbox row's metadata (a row may come from another writer: only a kind-tagged object). */
function aboutOf(metadata: Record<string, unknown> | undefined): MessageAbout | undefined {
  const about = metadata?.about;
  return about !== null && typeof about === "object" && typeof (about as { kind?: unknown }).kind === "string"
    ? (about as MessageAbout)
    : undefined;
}

/** `AgentOptions.tools`: the given host's declarations; no plugin may add to it. */
function fixedHostTools(host: ToolHost): AgentToolsControl {
  const refuse = (): never => {
    throw new Error("this agent was given a fixed tool host (AgentOptions.tools): a plugin cannot add tools");
  };
  const registry = new ToolRegistry();
  registry.register = refuse;
  return { registry, register: refuse, offer: refuse, declarations: () => host.declarations() };
}
