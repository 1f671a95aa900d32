/**
 * Durable events (plus live deltas) → the items people see (./items.ts). One projection for every view.
 *
 * Pure and incremental: `add` takes events in seq order, in batches of any size, and updates `items` in
 * place. Invariants (test/transcript/projection.test.ts checks them over random event sequences):
 * - Chunking does not matter: adding a log at once or in any split gives the same items, keys, versions
 *   and usage; so does a reopen (a new projection over the stored log).
 * - An event is applied once: a batch that repeats seqs already seen is skipped, so a view may replay.
 * - Keys are unique within a session (see items.ts) and never change.
 * - Usage is `usageOf` over the same events (log/usage.ts), kept incrementally: the run summary, chat's
 *   `/cost`, `sessions show` and the dashboard agree.
 * - Live deltas never change `items`: they fill `live`, which the stored `assistant/message` of the same
 *   step (or the turn's end) clears.
 * - Model output is kept as written; views sanitise (terminals) or escape (the DOM) where they draw.
 */
import type { LogEvent, Usage } from "../log/events.js";
import { toolDetailsOf } from "../log/tool-details.js";
import { addUsage, emptyUsage, requestUsage, type UsageTotals, usageTotalsOf } from "../log/usage.js";
import type {
  ApprovalState,
  ChildState,
  ItemFields,
  LiveReply,
  QuestionState,
  ToolState,
  TranscriptItem,
} from "./items.js";

type Item<K extends TranscriptItem["kind"]> = Extract<TranscriptItem, { kind: K }>;

/** What one `add` changed, in order: items created, and earlier items that changed. */
export type TranscriptChange = { item: TranscriptItem; change: "added" | "updated" };

export class Transcript {
  readonly items: TranscriptItem[] = [];
  /** The session's usage so far (equal to `usageOf(events).session`). */
  usage: UsageTotals = emptyUsage();
  /** Running while a turn is open (between `turn/start` and `turn/end`). */
  running = false;
  status: "idle" | "running" = "idle";
  title: string | undefined;
  goal: Item<"goal">["goal"] | undefined;
  lastTurnEnd: Item<"turn-end"> | undefined;
  live: LiveReply | undefined;
  readonly approvals = new Map<string, ApprovalState>();
  readonly questions = new Map<string, QuestionState>();
  readonly children = new Map<string, ChildState>();
  /** Bumped on every `add` and delta, so a view can tell that something moved. */
  version = 0;

  private seen = 0;
  private count = 0;
  private readonly tools = new Map<string, Item<"tool">>();
  private readonly owners = new Map<object, TranscriptItem>();
  private readonly jobs = new Map<string, Item<"job">>();
  private compaction: Item<"compaction"> | undefined;
  private goalRound: Item<"goal-round"> | undefined;
  private turnStartedAt: string | undefined;
  private turnUsage: UsageTotals = emptyUsage();
  /** Items made by the event being applied (for `.n` keys). */
  private made = 0;
  private changes: TranscriptChange[] = [];
  private changed = new Set<TranscriptItem>();
  /** `turn.step` of the replies stored (a snapshot of one of them is stale). */
  private readonly seenMessage = new Set<string>();

  /** The last seq applied (0 before any). */
  get lastSeq(): number {
    return this.seen;
  }

  /** How many events were applied. */
  get eventCount(): number {
    return this.count;
  }

  pendingApprovals(): ApprovalState[] {
    return [...this.approvals.values()].filter((a) => a.answer === undefined);
  }

  pendingQuestions(): QuestionState[] {
    return [...this.questions.values()].filter((q) => q.answers === undefined);
  }

  /** Applies events in seq order; returns what changed (an event already seen is skipped). */
  add(events: readonly LogEvent[]): TranscriptChange[] {
    this.changes = [];
    this.changed = new Set();
    for (const event of events) {
      if (event.seq <= this.seen) continue;
      this.seen = event.seq;
      this.count++;
      this.made = 0;
      this.apply(event);
    }
    this.version++;
    return this.changes;
  }

  /** An ephemeral delta of the step being streamed. */
  delta(delta: { type: string; delta: string; turn: number; step: number }): void {
    if (delta.type !== "text" && delta.type !== "reasoning") return;
    const live = this.live;
    if (!live || live.turn !== delta.turn || live.step !== delta.step)
      this.live = { turn: delta.turn, step: delta.step, text: "", reasoning: "" };
    const target = this.live as LiveReply;
    if (delta.type === "text") target.text += delta.delta;
    else target.reasoning += delta.delta;
    this.version++;
  }

  /**
   * The reply streamed so far when a view attaches mid-stream (the driving server's snapshot, taken in the
   * same tick as the delta subscription that follows it): it replaces what the view had for that step, which
   * may miss the deltas sent while it was disconnected.
   */
  resumeLive(live: LiveReply | undefined): void {
    if (!live || (live.text === "" && live.reasoning === "")) return;
    if (this.seenMessage.has(`${live.turn}.${live.step}`)) return; // its message is already here
    this.live = { turn: live.turn, step: live.step, text: live.text, reasoning: live.reasoning };
    this.version++;
  }

  // --- building items ---

  private push<T extends ItemFields>(event: LogEvent, fields: T): Item<T["kind"]> {
    const n = this.made++;
    const item = {
      key: n === 0 ? String(event.seq) : `${event.seq}.${n}`,
      seq: event.seq,
      at: event.at,
      version: 0,
      ...(event.turn === undefined ? {} : { turn: event.turn }),
      ...fields,
    } as TranscriptItem;
    this.items.push(item);
    this.changes.push({ item, change: "added" });
    this.changed.add(item);
    return item as Item<T["kind"]>;
  }

  private touch(item: TranscriptItem | undefined): void {
    if (!item) return;
    item.version++;
    if (this.changed.has(item)) return;
    this.changed.add(item);
    this.changes.push({ item, change: "updated" });
  }

  private apply(event: LogEvent): void {
    this.countUsage(event);
    switch (event.type) {
      case "session/start":
        if (event.data.title) this.title = event.data.title;
        return;
      case "session/title":
        this.title = event.data.title;
        return;
      case "agent/status":
        this.status = event.data.status;
        return;
      case "turn/start":
        this.running = true;
        this.turnStartedAt = event.at;
        this.turnUsage = emptyUsage();
        this.push(event, {
          kind: "turn-start",
          ...(event.data.trigger ? { trigger: event.data.trigger } : {}),
        });
        return;
      case "turn/end": {
        this.running = false;
        this.live = undefined;
        const started = this.turnStartedAt ? Date.parse(this.turnStartedAt) : Number.NaN;
        const ended = Date.parse(event.at);
        this.lastTurnEnd = this.push(event, {
          kind: "turn-end",
          reason: event.data.reason,
          ...(event.data.error ? { error: event.data.error } : {}),
          ...(Number.isFinite(started) && Number.isFinite(ended)
            ? { durationMs: Math.max(0, ended - started) }
            : {}),
          turnUsage: this.turnUsage,
          sessionUsage: this.usage,
        });
        this.turnStartedAt = undefined;
        return;
      }
      case "user/message":
        this.userMessage(event as LogEvent<"user/message">);
        return;
      case "assistant/message":
        this.assistantMessage(event as LogEvent<"assistant/message">);
        return;
      case "assistant/attempt": {
        const text = event.data.blocks
          .filter((b) => b.type === "text")
          .map((b) => b.text)
          .join("");
        this.push(event, { kind: "attempt", attempt: event.data.attempt, text, error: event.data.error });
        return;
      }
      case "llm/retry":
        this.push(event, {
          kind: "retry",
          attempt: event.data.attempt,
          delayMs: event.data.delayMs,
          error: event.data.error,
        });
        return;
      case "tool/call": {
        if (event.data.synthetic) return;
        const item = this.toolItem(event, event.data.callId, event.data.name, event.data.arguments);
        if (item.tool.state === "requested" || item.tool.state === "approval") item.tool.state = "running";
        item.tool.arguments = event.data.arguments;
        this.touch(item);
        return;
      }
      case "tool/result": {
        if (event.data.surfaceOp) return; // C12: a pruned copy for the model; people keep the original
        const d = event.data;
        const item = this.toolItem(event, d.callId, d.name);
        const details = toolDetailsOf(d.details);
        item.tool.state = d.isError ? "failed" : "done";
        item.tool.result = {
          text: d.text,
          isError: d.isError === true,
          ...(d.code ? { code: d.code } : {}),
          ...(d.durationMs === undefined ? {} : { durationMs: d.durationMs }),
          ...(details ? { details } : {}),
          ...(d.spill ? { spilled: d.spill.bytes } : {}),
          ...(d.synthetic ? { synthetic: true } : {}),
        };
        this.touch(item);
        return;
      }
      case "compaction/start":
        this.compaction = this.push(event, {
          kind: "compaction",
          compaction: { reason: event.data.reason, done: false },
        });
        return;
      case "compaction/summary":
        if (this.compaction) {
          const c = this.compaction.compaction;
          if (event.data.tokensBefore !== undefined) c.tokensBefore = event.data.tokensBefore;
          if (event.data.tokensAfter !== undefined) c.tokensAfter = event.data.tokensAfter;
          this.touch(this.compaction);
        }
        return;
      case "compaction/end": {
        const item =
          this.compaction ??
          this.push(event, { kind: "compaction", compaction: { reason: "unknown", done: false } });
        const c = item.compaction;
        c.done = true;
        c.ok = event.data.ok;
        if (event.data.error) c.error = event.data.error;
        if (event.data.replaced !== undefined) c.replaced = event.data.replaced;
        this.touch(item);
        this.compaction = undefined;
        return;
      }
      case "goal/updated":
        this.goal = event.data.goal;
        this.push(event, { kind: "goal", action: event.data.action, goal: event.data.goal });
        return;
      case "goal/round":
        this.goalRound = this.push(event, {
          kind: "goal-round",
          round: event.data.round,
          maxRounds: event.data.maxRounds,
        });
        return;
      case "subagent/started": {
        const known = this.children.get(event.data.childId);
        if (known) return;
        const child: ChildState = {
          childId: event.data.childId,
          mode: event.data.mode,
          task: event.data.task,
          state: "running",
        };
        this.children.set(child.childId, child);
        this.owners.set(child, this.push(event, { kind: "subagent", child }));
        return;
      }
      case "subagent/settled":
        // In a child's own log (S3): the child itself ended; its parent learns it from the settlement message.
        this.settleChild(event, event.data.childId, event.data.reason);
        return;
      case "approval/requested": {
        const approval: ApprovalState = {
          id: event.data.id,
          callId: event.data.callId,
          tool: event.data.tool,
          summary: event.data.summary,
          ...(event.data.reason ? { reason: event.data.reason } : {}),
        };
        this.approvals.set(approval.id, approval);
        this.owners.set(approval, this.push(event, { kind: "approval", approval }));
        const tool = this.tools.get(approval.callId);
        if (tool) {
          approval.hasCall = true;
          tool.tool.approval = approval;
          if (tool.tool.state === "requested" || tool.tool.state === "running") tool.tool.state = "approval";
          this.touch(tool);
        }
        return;
      }
      case "approval/answered": {
        const approval = this.approvals.get(event.data.id);
        if (!approval) return;
        approval.answer = event.data.decision;
        this.touch(this.owners.get(approval));
        const tool = this.tools.get(approval.callId);
        if (tool) {
          // the call was recorded as started (tool/call) before it asked
          if (tool.tool.state === "approval") tool.tool.state = "running";
          this.touch(tool); // it draws the answer
        }
        return;
      }
      case "question/asked": {
        const question: QuestionState = {
          id: event.data.id,
          callId: event.data.callId,
          questions: event.data.questions,
        };
        this.questions.set(question.id, question);
        this.owners.set(question, this.push(event, { kind: "question", question }));
        return;
      }
      case "question/answered": {
        const question = this.questions.get(event.data.id);
        if (!question) return;
        question.answers = event.data.answers;
        this.touch(this.owners.get(question));
        return;
      }
      case "job/started":
        this.jobs.set(
          event.data.jobId,
          this.push(event, { kind: "job", jobId: event.data.jobId, label: event.data.label }),
        );
        return;
      case "job/finished": {
        const item = this.jobs.get(event.data.jobId);
        if (!item) return;
        item.status = event.data.status;
        if (event.data.exitCode !== undefined) item.exitCode = event.data.exitCode;
        this.touch(item);
        return;
      }
      case "agent/error":
        this.push(event, { kind: "error", code: event.data.code, message: event.data.message });
        return;
      case "answer/rejected":
        // Something wrote an answer the server never signed: the person should know; the request still waits.
        this.push(event, {
          kind: "note",
          text: `ignored a forged answer to ${event.data.kind} ${event.data.id} (${event.data.reason})`,
        });
        return;
      case "sandbox/git-repaired":
        this.push(event, { kind: "git-repaired", repairs: event.data.repairs });
        return;
      case "instructions/withheld":
        this.push(event, { kind: "instructions-withheld", withheld: event.data });
        return;
      case "session/cwd":
        this.push(event, { kind: "note", text: `working directory: ${event.data.cwd}` });
        return;
      case "plan/mode":
        this.push(event, {
          kind: "note",
          text: event.data.mode === "plan" ? "plan mode on" : "plan mode off",
        });
        return;
      default:
        return; // bookkeeping (requests, steps, inbox, prunes, reviews) is not part of what people read
    }
  }

  /** M20 through usage.ts: the same totals `usageOf` computes, one event at a time. */
  private countUsage(event: LogEvent): void {
    if (event.type === "session/end-seed") {
      // S1: everything before a fork's seed marker is its parent's and is not counted here.
      this.usage = emptyUsage();
      this.turnUsage = emptyUsage();
      return;
    }
    const usage: Usage | undefined = requestUsage(event);
    if (!usage) return;
    const one = usageTotalsOf(usage);
    this.usage = addUsage(this.usage, one);
    if (this.running) this.turnUsage = addUsage(this.turnUsage, one);
  }

  private userMessage(event: LogEvent<"user/message">): void {
    const { text, source, about } = event.data;
    if (event.data.surfaceOp) return; // C8/C12: a model-visible replacement, not something that happened
    if (source === "human") {
      const steer = event.step !== undefined && event.step > 1;
      this.push(event, { kind: "user", text, steer });
      return;
    }
    if (source === "continuation") {
      this.push(event, { kind: "nudge", about: about?.kind === "continuation" ? about : undefined, text });
      return;
    }
    if (source === "goal-round" && this.goalRound && this.goalRound.text === undefined) {
      this.goalRound.text = text;
      this.touch(this.goalRound);
      return;
    }
    if (source === "subagent-settled" && about?.kind === "subagent-settled") {
      this.settleChild(event, about.childId, about.reason);
    }
    this.push(event, { kind: "context", source, text });
  }

  private settleChild(event: LogEvent, childId: string, reason: ChildState["state"]): void {
    const child = this.children.get(childId);
    if (child) {
      if (child.state !== "running") return; // S3: the first settlement is the child's result
      child.state = reason;
      this.touch(this.owners.get(child));
      return;
    }
    const fresh: ChildState = { childId, mode: "unknown", task: "", state: reason };
    this.children.set(childId, fresh);
    this.owners.set(fresh, this.push(event, { kind: "subagent", child: fresh }));
  }

  private assistantMessage(event: LogEvent<"assistant/message">): void {
    const data = event.data;
    this.seenMessage.add(`${event.turn}.${event.step}`);
    const live = this.live;
    if (live && live.turn === event.turn && live.step === event.step) this.live = undefined;
    let text = "";
    for (const block of data.blocks) {
      if (block.type === "reasoning") {
        if (block.text) this.push(event, { kind: "reasoning", text: block.text });
      } else if (block.type === "text") {
        text += block.text;
      }
    }
    if (text || data.interrupted)
      this.push(event, {
        kind: "assistant",
        text,
        model: data.model,
        interrupted: data.interrupted === true,
      });
    for (const block of data.blocks)
      if (block.type === "tool-call") this.toolItem(event, block.id, block.name, block.arguments);
  }

  private toolItem(event: LogEvent, callId: string, name: string, args = ""): Item<"tool"> {
    const existing = this.tools.get(callId);
    if (existing) return existing;
    const tool: ToolState = { callId, name, arguments: args, state: "requested" };
    const item = this.push(event, { kind: "tool", tool });
    this.tools.set(callId, item);
    return item;
  }
}

/** A whole log at once (a reopen, `sessions show`). */
export function projectTranscript(events: readonly LogEvent[]): Transcript {
  const transcript = new Transcript();
  transcript.add(events);
  return transcript;
}
