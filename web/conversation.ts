/**
 * A session's durable events as a readable conversation, built incrementally (issue 21 item 2).
 *
 * Pure: no DOM, so it is tested under Node (test/dashboard/conversation.test.ts). `add` takes events in
 * seq order (the feed guarantees it) and updates `items` in place: a new item is appended; a later event
 * that completes an earlier item (a tool's result, an approval's answer, a child's settlement) bumps that
 * item's `version`, so the view re-renders only what changed. Ten thousand events cost one pass.
 *
 * - Reasoning is its own item, shown collapsed. Text is the assistant's reply.
 * - A tool card starts from the assistant's tool-call block and gathers the call's decision, dispatch
 *   and result by call id.
 * - Retries (`llm/retry`, a failed `assistant/attempt`) and compactions are marked where they happened.
 * - User messages the runtime writes (context, reminders, goal rounds, a child's settlement) are kept apart
 *   from what a human typed, labelled by their source.
 * - The session's state beside the conversation: running or idle, the pending approvals and questions, the
 *   goal, the children, the token usage of the replies.
 */
import type { EventDataMap, GoalSnapshot, LogEvent, Usage } from "./types.js";

type Base = { seq: number; turn?: number; at: string; version: number };

export type Item =
  | (Base & { kind: "user"; text: string })
  | (Base & { kind: "context"; source: string; text: string })
  | (Base & { kind: "reasoning"; text: string })
  | (Base & { kind: "assistant"; text: string; model: string; interrupted: boolean })
  | (Base & { kind: "tool"; tool: ToolState })
  | (Base & { kind: "approval"; approval: ApprovalState })
  | (Base & { kind: "question"; question: QuestionState })
  | (Base & { kind: "turn-start"; trigger?: string })
  | (Base & { kind: "turn-end"; reason: string; error?: { code: string; message: string } })
  | (Base & { kind: "retry"; attempt: number; delayMs: number; error: { code: string; message: string } })
  | (Base & { kind: "attempt"; attempt: number; text: string; error: { code: string; message: string } })
  | (Base & { kind: "compaction"; compaction: CompactionState })
  | (Base & { kind: "goal"; action: string; goal: GoalSnapshot })
  | (Base & { kind: "goal-round"; round: number; maxRounds: number })
  | (Base & { kind: "subagent"; child: ChildState })
  | (Base & { kind: "job"; jobId: string; label: string; status?: string; exitCode?: number })
  | (Base & { kind: "error"; code: string; message: string })
  | (Base & { kind: "note"; text: string });

export type ItemKind = Item["kind"];

/** An item's own fields, without the ones every item has. */
type Fields = Item extends infer I ? (I extends Item ? Omit<I, keyof Base> : never) : never;

export type ToolState = {
  callId: string;
  name: string;
  arguments: string;
  dispatched: boolean;
  decision?: { decision: string; reason?: string };
  result?: { text: string; isError: boolean; code?: string; durationMs?: number; spilled?: number };
};

export type ApprovalState = {
  id: string;
  callId: string;
  tool: string;
  summary: string;
  reason?: string;
  answer?: string;
};

export type QuestionState = { id: string; callId: string; questions: unknown[]; answers?: unknown[] };

export type CompactionState = {
  reason: string;
  done: boolean;
  ok?: boolean;
  error?: string;
  replaced?: number;
  tokensBefore?: number;
  tokensAfter?: number;
};

export type ChildState = {
  childId: string;
  mode: string;
  task: string;
  settled?: { reason: string; closingMessage?: string };
};

/** Live text of the step being streamed (ephemeral deltas), cleared when its message is stored. */
export type Streaming = { turn: number; step: number; text: string; reasoning: string };

/** Sources of user messages a person wrote; every other source is the runtime's. */
const HUMAN = new Set(["human"]);

export const SOURCE_LABELS: Record<string, string> = {
  "runtime-context": "runtime context",
  "time-context": "time",
  instructions: "instructions",
  skills: "skills",
  "model-switch": "model switch",
  "mode-switch": "mode switch",
  "policy-change": "policy change",
  "compact-checkpoint": "compaction checkpoint",
  "context-reinjection": "context after compaction",
  "tool-context": "reminder",
  "job-notice": "background job",
  delegation: "task from the parent",
  "subagent-settled": "subagent finished",
  "agent-message": "agent message",
  "goal-round": "goal round",
  "goal-wrapup": "goal wrap-up",
  continuation: "continuation check",
  schedule: "schedule",
  "turn-limit": "turn limit",
};

export class Conversation {
  readonly items: Item[] = [];
  /** Every seq added, in order (the view's resume checks and the browser tests read it). */
  readonly seqs: number[] = [];
  status: "idle" | "running" = "idle";
  running = false;
  lastTurnEnd: string | undefined;
  title: string | undefined;
  goal: GoalSnapshot | undefined;
  streaming: Streaming | undefined;
  readonly usage: Required<Usage> = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
  };
  readonly approvals = new Map<string, ApprovalState>();
  readonly questions = new Map<string, QuestionState>();
  readonly children = new Map<string, ChildState>();
  private readonly tools = new Map<string, Item & { kind: "tool" }>();
  private readonly owners = new Map<object, Item>();
  private compaction: (Item & { kind: "compaction" }) | undefined;
  /** Bumped on every change, so a view can tell that something moved. */
  version = 0;

  get lastSeq(): number {
    return this.seqs.at(-1) ?? 0;
  }

  pendingApprovals(): ApprovalState[] {
    return [...this.approvals.values()].filter((a) => a.answer === undefined);
  }

  pendingQuestions(): QuestionState[] {
    return [...this.questions.values()].filter((q) => q.answers === undefined);
  }

  add(events: readonly LogEvent[]): void {
    for (const event of events) {
      if (event.seq <= this.lastSeq) continue; // once each, even if a caller repeats a batch
      this.seqs.push(event.seq);
      this.apply(event);
    }
    this.version++;
  }

  /** An ephemeral delta of the step being streamed. */
  delta(delta: { type: "text" | "reasoning"; delta: string; turn: number; step: number }): void {
    const live = this.streaming;
    if (!live || live.turn !== delta.turn || live.step !== delta.step)
      this.streaming = { turn: delta.turn, step: delta.step, text: "", reasoning: "" };
    const target = this.streaming!;
    if (delta.type === "text") target.text += delta.delta;
    else target.reasoning += delta.delta;
    this.version++;
  }

  private push<T extends Fields>(event: LogEvent, item: T): Extract<Item, { kind: T["kind"] }> {
    const full = {
      seq: event.seq,
      at: event.at,
      version: 0,
      ...(event.turn === undefined ? {} : { turn: event.turn }),
      ...item,
    } as Item;
    this.items.push(full);
    return full as Extract<Item, { kind: T["kind"] }>;
  }

  private touch(item: Item | undefined) {
    if (item) item.version++;
  }

  private apply(event: LogEvent): void {
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
        this.push(event, {
          kind: "turn-start",
          ...(event.data.trigger ? { trigger: event.data.trigger } : {}),
        });
        return;
      case "turn/end":
        this.running = false;
        this.streaming = undefined;
        this.lastTurnEnd = event.data.reason;
        this.push(event, {
          kind: "turn-end",
          reason: event.data.reason,
          ...(event.data.error ? { error: event.data.error } : {}),
        });
        return;
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
      case "tool/decision": {
        const item = this.toolItem(event, event.data.callId, event.data.name);
        item.tool.decision = {
          decision: event.data.decision,
          ...(event.data.reason ? { reason: event.data.reason } : {}),
        };
        this.touch(item);
        return;
      }
      case "tool/call": {
        const item = this.toolItem(event, event.data.callId, event.data.name, event.data.arguments);
        item.tool.dispatched = true;
        item.tool.arguments = event.data.arguments;
        this.touch(item);
        return;
      }
      case "tool/result": {
        const item = this.toolItem(event, event.data.callId, event.data.name);
        const d = event.data;
        item.tool.result = {
          text: d.text,
          isError: d.isError === true,
          ...(d.code ? { code: d.code } : {}),
          ...(d.durationMs === undefined ? {} : { durationMs: d.durationMs }),
          ...(d.spill ? { spilled: d.spill.bytes } : {}),
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
          this.push(event, { kind: "compaction", compaction: { reason: "?", done: false } });
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
        this.push(event, { kind: "goal-round", round: event.data.round, maxRounds: event.data.maxRounds });
        return;
      case "subagent/started": {
        const child: ChildState = {
          childId: event.data.childId,
          mode: event.data.mode,
          task: event.data.task,
        };
        this.children.set(child.childId, child);
        this.owners.set(child, this.push(event, { kind: "subagent", child }));
        return;
      }
      case "subagent/settled": {
        const child = this.children.get(event.data.childId);
        const settled = {
          reason: event.data.reason,
          ...(event.data.closingMessage ? { closingMessage: event.data.closingMessage } : {}),
        };
        if (child) {
          child.settled = settled;
          this.touch(this.owners.get(child));
        } else {
          const fresh: ChildState = { childId: event.data.childId, mode: "?", task: "", settled };
          this.children.set(fresh.childId, fresh);
          this.owners.set(fresh, this.push(event, { kind: "subagent", child: fresh }));
        }
        return;
      }
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
        return;
      }
      case "approval/answered": {
        const approval = this.approvals.get(event.data.id);
        if (approval) {
          approval.answer = event.data.decision;
          this.touch(this.owners.get(approval));
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
        if (question) {
          question.answers = event.data.answers;
          this.touch(this.owners.get(question));
        }
        return;
      }
      case "job/started":
        this.push(event, { kind: "job", jobId: event.data.jobId, label: event.data.label });
        return;
      case "job/finished": {
        const item = this.items.findLast((i) => i.kind === "job" && i.jobId === event.data.jobId);
        if (item?.kind === "job") {
          item.status = event.data.status;
          if (event.data.exitCode !== undefined) item.exitCode = event.data.exitCode;
          this.touch(item);
        }
        return;
      }
      case "agent/error":
        this.push(event, { kind: "error", code: event.data.code, message: event.data.message });
        return;
      case "answer/rejected":
        // Something wrote an answer the server never signed: the person should know, the request still waits.
        this.push(event, {
          kind: "note",
          text: `ignored a forged answer to ${event.data.kind} ${event.data.id} (${event.data.reason})`,
        });
        return;
      case "sandbox/git-repaired":
        this.push(event, {
          kind: "note",
          text: event.data.repairs
            .map(
              (repair) =>
                `git would have run a program: ${repair.path} ${repair.action === "settings-removed" ? `lost ${repair.settings.join(", ")}` : "was moved aside"}; original kept at ${repair.quarantine}`,
            )
            .join("\n"),
        });
        return;
      case "plan/mode":
        this.push(event, {
          kind: "note",
          text: event.data.mode === "plan" ? "plan mode on" : "plan mode off",
        });
        return;
      default:
        return; // bookkeeping events (requests, steps, inbox, prunes) are not part of the conversation
    }
  }

  private userMessage(event: LogEvent<"user/message">): void {
    const { text, source } = event.data;
    if (HUMAN.has(source)) this.push(event, { kind: "user", text });
    else this.push(event, { kind: "context", source, text });
  }

  private assistantMessage(event: LogEvent<"assistant/message">): void {
    const data: EventDataMap["assistant/message"] = event.data;
    const live = this.streaming;
    if (live && live.turn === event.turn && live.step === event.step) this.streaming = undefined;
    if (data.usage) {
      this.usage.inputTokens += data.usage.inputTokens;
      this.usage.outputTokens += data.usage.outputTokens;
      this.usage.cacheReadTokens += data.usage.cacheReadTokens;
      this.usage.cacheWriteTokens += data.usage.cacheWriteTokens;
      this.usage.reasoningTokens += data.usage.reasoningTokens ?? 0;
    }
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

  private toolItem(event: LogEvent, callId: string, name: string, args = ""): Item & { kind: "tool" } {
    const existing = this.tools.get(callId);
    if (existing) return existing;
    const item = this.push(event, {
      kind: "tool",
      tool: { callId, name, arguments: args, dispatched: false },
    }) as Item & { kind: "tool" };
    this.tools.set(callId, item);
    return item;
  }
}
