/**
 * What people see of a session, as items: the one model every view renders (`bdsh run`, `bdsh chat`, the
 * dashboard). Built from durable events by ./projection.ts; nothing here knows a terminal or a DOM.
 *
 * Every item has a `key` unique within its session and stable across reopen and chunked loading: the seq of
 * the event that created it, and `.n` for the n-th further item the same event created (an assistant message
 * with two tool calls makes `41`, `41.1`, `41.2`). `version` counts the changes made to the item after it was
 * created (a tool's result, an approval's answer), so a view re-renders only what moved.
 */
import type {
  ApprovalDecision,
  ErrorInfo,
  EventDataMap,
  GoalSnapshot,
  MessageAbout,
  TurnEndReason,
  UserSource,
} from "../log/events.js";
import type { ToolDetails } from "../log/tool-details.js";
import type { UsageTotals } from "../log/usage.js";

type Base = { key: string; seq: number; turn?: number; at: string; version: number };

/** A tool call from the model's request to its result. */
export type ToolState = {
  callId: string;
  name: string;
  /** The call's arguments as the model wrote them (model output: any text). */
  arguments: string;
  /**
   * requested: in the reply, not started; approval: waiting for a person; running: dispatched (L9 started);
   * done / failed: its result is stored; `result.synthetic` marks a result the harness wrote for a call that
   * never finished (L9 repair, cancel).
   */
  state: "requested" | "approval" | "running" | "done" | "failed";
  /** T16: the person's decision this call asked for, the same object as its `approval` item's. */
  approval?: ApprovalState;
  result?: {
    text: string;
    isError: boolean;
    code?: string;
    durationMs?: number;
    details?: ToolDetails;
    /** C14: bytes of the full result kept in a blob. */
    spilled?: number;
    synthetic?: boolean;
  };
};

export type ApprovalState = {
  id: string;
  callId: string;
  tool: string;
  summary: string;
  reason?: string;
  answer?: ApprovalDecision;
  /** The call that asked is an item of this transcript (`tool.approval`): a view may draw them as one. */
  hasCall?: true;
};

export type QuestionState = { id: string; callId: string; questions: unknown[]; answers?: unknown[] };

/** A child agent as the parent's log records it: started, then settled (S3's message to the parent). */
export type ChildState = {
  childId: string;
  mode: "spawn" | "fork" | "unknown";
  task: string;
  state: "running" | TurnEndReason;
};

export type CompactionState = {
  reason: string;
  done: boolean;
  ok?: boolean;
  error?: string;
  replaced?: number;
  tokensBefore?: number;
  tokensAfter?: number;
};

export type TranscriptItem =
  /** What a person typed; `steer` when it joined a running turn (L4). */
  | (Base & { kind: "user"; text: string; steer: boolean })
  /** A message the harness added for the model that no other item stands for (context, reminders, notices). */
  | (Base & { kind: "context"; source: UserSource; text: string })
  /** §9: the harness asked the model to continue, and why. */
  | (Base & {
      kind: "nudge";
      about: Extract<MessageAbout, { kind: "continuation" }> | undefined;
      text: string;
    })
  | (Base & { kind: "reasoning"; text: string })
  | (Base & { kind: "assistant"; text: string; model: string; interrupted: boolean })
  | (Base & { kind: "tool"; tool: ToolState })
  | (Base & { kind: "approval"; approval: ApprovalState })
  | (Base & { kind: "question"; question: QuestionState })
  | (Base & { kind: "subagent"; child: ChildState })
  | (Base & { kind: "turn-start"; trigger?: string })
  /**
   * The turn's end with its summary: how long it took (stored timestamps, the same on reopen), the tokens
   * of the turn and of the session so far (one function over the log: log/usage.ts).
   */
  | (Base & {
      kind: "turn-end";
      reason: TurnEndReason;
      error?: ErrorInfo;
      durationMs?: number;
      turnUsage: UsageTotals;
      sessionUsage: UsageTotals;
    })
  | (Base & { kind: "retry"; attempt: number; delayMs: number; error: ErrorInfo })
  | (Base & { kind: "attempt"; attempt: number; text: string; error: ErrorInfo })
  | (Base & { kind: "compaction"; compaction: CompactionState })
  | (Base & { kind: "goal"; action: string; goal: GoalSnapshot })
  /** P4: a goal round; `text` is the round's message once it was delivered. */
  | (Base & { kind: "goal-round"; round: number; maxRounds: number; text?: string })
  | (Base & { kind: "job"; jobId: string; label: string; status?: string; exitCode?: number })
  | (Base & { kind: "error"; code: string; message: string })
  | (Base & { kind: "git-repaired"; repairs: EventDataMap["sandbox/git-repaired"]["repairs"] })
  | (Base & { kind: "instructions-withheld"; withheld: EventDataMap["instructions/withheld"] })
  | (Base & { kind: "note"; text: string });

/** An item's own fields, without the ones every item has. */
export type ItemFields = TranscriptItem extends infer I
  ? I extends TranscriptItem
    ? Omit<I, keyof Base>
    : never
  : never;

/** Text and reasoning of the reply being streamed (ephemeral deltas), gone when its message is stored. */
export type LiveReply = { turn: number; step: number; text: string; reasoning: string };
