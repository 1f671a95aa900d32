/**
 * The event log's schema: every event the system writes, in one union (ARCHITECTURE "one idea").
 *
 * Invariants:
 * - `seq` is dense and increasing per session, starting at 1; the store enforces it (expected-seq appends).
 * - Events are never edited. Compaction, pruning and system-prompt rewrites append events whose
 *   `surfaceOp` hides a range of surface nodes and puts the new event in its place (C1).
 * - `data` round-trips byte for byte through both stores: tool-call arguments stay the model's exact string.
 *
 * Adding a core event type means adding one row to `CoreEventDataMap`; `assertNever` finds every switch to
 * update. The core events are a closed list (`EVENT_TYPES`). A plugin's own state lives in events it declares
 * by merging into `PluginEventDataMap`, namespaced by the plugin (`goal/armed`, `files/observed`); they are
 * never model-visible, and the plugin folds them back when any process opens the session.
 */
import type { AssistantBlock } from "./messages.js";
import type { ToolDetails } from "./tool-details.js";

export type SessionKind = "main" | "subagent" | "fork" | "ralph";

export type TurnEndReason = "completed" | "max-tokens" | "blocked" | "aborted" | "error" | "interrupted";

export type StepResult = "continue" | "completed" | "max-tokens" | "aborted" | "error";

export type FinishKind = "stop" | "tool-calls" | "max-tokens" | "aborted" | "error";

/** M20: usage kept disjoint. */
export type Usage = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens?: number;
};

/** A code from M17 (model errors), T3 (tool errors) or the loop's own, with the human-readable message. */
export type ErrorInfo = { code: string; message: string };

/** C1: hide the surface nodes from `startSeq` through `endSeq` (by position) and insert this event there. */
export type SurfaceOp = { op: "replace"; startSeq: number; endSeq: number };

/** Where a user-role message came from. Everything that is not `human` is harness-authored. */
export type UserSource =
  | "human"
  | "runtime-context" // L13
  | "time-context" // SP5
  | "instructions" // SP6
  | "skills" // SP7, T20
  | "model-switch" // L14
  | "mode-switch" // P2
  | "policy-change" // T16
  | "compact-checkpoint" // C8
  | "context-reinjection" // after compaction: todos and goal (beyond DSH)
  | "tool-context" // T15 additional contexts, G1 reminders
  | "job-notice" // T9
  | "delegation" // S1: the task a parent agent gave this child
  | "subagent-settled" // S3
  | "agent-message" // S5
  | "goal-round" // P4
  | "goal-wrapup" // P5
  | "continuation" // §9 continuation checks
  | "schedule" // S8
  | "turn-limit"; // L3: a step limit or the session's budget ended the previous turn

/**
 * For people's views (src/transcript/): what a harness-authored user message is about, as data, so a view can
 * say "asked the model to continue: 2 todos open" without reading the model-visible text. Never sent to the
 * model.
 */
export type MessageAbout =
  | {
      kind: "continuation";
      /** §9 which check fired: (a) empty reply, (b) open todos, (d) announced action, M14 length, S4 report. */
      check: "empty-reply" | "open-todos" | "announced-action" | "length" | "report-tool";
      openTodos?: number;
    }
  | { kind: "subagent-settled"; childId: string; reason: TurnEndReason };

export type InboxQueue = "next-turn" | "next-step";
export type InboxMode = "followup" | "steer" | "inject";

/** L4: an inbox item as the log records it. The row in the store is the durable copy. */
export type InboxItemRecord = { id: string; mode: InboxMode; source: UserSource; text: string };

export type GoalPhase = "active" | "paused" | "blocked" | "complete";
export type GoalSnapshot = {
  id: string;
  revision: number;
  objective: string;
  phase: GoalPhase;
  roundsStarted: number;
  maxRounds: number;
  blockedReason?: string;
};

export type ApprovalDecision =
  | "allow-once"
  | "allow-session"
  | "allow-command"
  | "allow-always"
  | "deny"
  | "cancel";

export interface CoreEventDataMap {
  // --- session lifecycle ---
  "session/start": { kind: SessionKind; cwd?: string; parentId?: string; title?: string };
  /** S1 fork: the parent's events up to `parentSeq` were copied above this marker (C9 stale-lock boundary). */
  "session/end-seed": { parentId: string; parentSeq: number };
  /** L18: an archived session's pre-step rejects with a `blocked` turn end. Reserved: archiving is a flag on
   * the session row today (`sessions archive`, the HTTP archive route); nothing writes this event yet. */
  "session/archived": { archived: boolean };
  /** `usage`: the title side request's tokens, when a model wrote the title (M20). */
  "session/title": { title: string; usage?: Usage };
  /**
   * T22, SP4: `working_directory` moved the session's working directory from `previous` to `cwd` (absolute,
   * inside the workspace). The last one is the session's cwd on resume, on another server and in a fork;
   * without one it is the workspace. Log only: the model learns of it from the runtime context.
   */
  "session/cwd": { cwd: string; previous: string };

  // --- agent driver (L1, L4, L6, L15) ---
  "agent/status": { status: "idle" | "running" };
  "agent/inbox/spliced": {
    queue: InboxQueue;
    op: "add" | "take" | "clear" | "redirect";
    items: InboxItemRecord[];
  };
  "agent/error": ErrorInfo & { plugin?: string };

  // --- turns and steps (L1, L2) ---
  "turn/start": { trigger?: InboxMode | "resume" };
  "turn/end": { reason: TurnEndReason; error?: ErrorInfo };
  "step/start": Record<string, never>;
  "step/end": { result: StepResult };

  // --- model-visible messages (C1) ---
  "system/message": { text: string; surfaceOp?: SurfaceOp };
  /** SP8: a tool list that changes mid-session (MCP `tools/list_changed`, src/mcp/tools.ts) is announced to
   * the model by this message, never by rewriting earlier requests. */
  "developer/message": { text: string; toolAdditions?: string[]; toolRemovals?: string[] };
  "user/message": {
    text: string;
    source: UserSource;
    inboxId?: string;
    surfaceOp?: SurfaceOp;
    /** C1: the raw events a replacement stands for. */
    sourceEventSeqs?: number[];
    /** What a harness message is about, for people's views; never model-visible. */
    about?: MessageAbout;
  };
  "assistant/message": {
    blocks: AssistantBlock[];
    provider: string;
    model: string;
    finish: FinishKind;
    usage?: Usage;
    /** L7: cancelled mid-stream; the visible prefix is kept, tool calls are dropped. */
    interrupted?: boolean;
    /** M14: tool calls dropped because the reply was cut at max_tokens. */
    droppedToolCalls?: number;
  };
  /** M16, L10: a failed or aborted attempt's output; log only, never model-visible. */
  "assistant/attempt": { blocks: AssistantBlock[]; attempt: number; error: ErrorInfo };

  // --- request envelope (L11, L14) ---
  "request/header": {
    provider: string;
    model: string;
    effort: string;
    maxTokens: number;
    tools: string[];
    toolsHash: string;
    systemHash: string;
  };
  "request/context": {
    provider: string;
    model: string;
    contextWindow: number;
    systemPromptUpdate: "in-history" | "rewrite";
  };

  // --- retry (M18) ---
  "llm/retry": { attempt: number; delayMs: number; error: ErrorInfo };
  "llm/retry-started": { attempt: number };

  // --- tools (L8, L9, L19, T2, T15) ---
  /** Reserved for T2's pre-execute policy outcome as its own event; today approvals are recorded as
   * `approval/*` events and a denial as the call's error result, so nothing writes this yet. */
  "tool/decision": {
    callId: string;
    name: string;
    decision: "allow" | "deny" | "ask" | "cancel";
    reason?: string;
  };
  /** The call was recorded as started (L9 distinguishes started from never started). */
  "tool/call": { callId: string; name: string; arguments: string; synthetic?: boolean };
  "tool/result": {
    callId: string;
    name: string;
    text: string;
    isError?: boolean;
    code?: string;
    synthetic?: boolean;
    durationMs?: number;
    /** What the call did, as data for people's views (tool-details.ts); never model-visible. */
    details?: ToolDetails;
    /** C14: the full result lives in a spilled blob. */
    spill?: { blobId: string; bytes: number };
    /** C12: a pruned copy replacing the original result. */
    surfaceOp?: SurfaceOp;
  };

  // --- context management (C9, C12) ---
  "compaction/start": { reason: "pressure" | "overflow" | "manual" };
  "compaction/summary": {
    text: string;
    startSeq: number;
    endSeq: number;
    tokensBefore?: number;
    tokensAfter?: number;
    /** M20: the summary request's tokens. */
    usage?: Usage;
  };
  /** `usage`: a summary that arrived but was refused (M20; on success it is on `compaction/summary`). */
  "compaction/end": { ok: boolean; error?: string; replaced?: number; usage?: Usage };
  "compaction/prune": { callId: string; resultSeq: number; charsBefore: number; charsAfter: number };

  // --- background jobs (T9) ---
  "job/started": { jobId: string; kind: string; label: string };
  "job/finished": { jobId: string; status: string; exitCode?: number };

  // --- goals (P3–P5) ---
  "goal/updated": { goal: GoalSnapshot; action: string };
  "goal/round": { round: number; maxRounds: number };

  // --- subagents (S1, S3) ---
  /** In the parent's log: a child was created and given its task. */
  "subagent/started": { childId: string; mode: "spawn" | "fork"; task: string };
  /**
   * In the child's own log, once per settlement (its work ended and nothing is queued): how it ended, its
   * closing message, its structured result (S4) and a diagnostic (at most 4,096 bytes). The first one is
   * the child's terminal result (subagents/ledger.ts).
   */
  "subagent/settled": {
    childId: string;
    parentId: string;
    reason: TurnEndReason;
    closingMessage?: string;
    structured?: unknown;
    diagnostic?: string;
  };

  // --- approvals and questions (T16, T18) ---
  "approval/requested": { id: string; callId: string; tool: string; summary: string; reason?: string };
  "approval/answered": { id: string; decision: ApprovalDecision };
  /** S7: the auto-reviewer's verdict on one approval (log only). `error`: the review failed, so a deny. */
  "approval/reviewed": {
    callId: string;
    tool: string;
    risk?: "low" | "medium" | "high";
    decision?: "allow" | "deny";
    outcome: "allow" | "deny" | "ask";
    error?: string;
    /** M20: the review request's tokens. */
    usage?: Usage;
  };
  "question/asked": { id: string; callId: string; questions: unknown[] };
  "question/answered": { id: string; answers: unknown[] };
  /**
   * An answer row for the pending request `id` without a valid proof of the person's channel (written to
   * the store by something that is not the server, or changed there): discarded, the request still waits
   * (server/answer-proof.ts). Log only, never model-visible.
   */
  "answer/rejected": {
    id: string;
    kind: "approval" | "question";
    inboxId: string;
    reason: "unsigned" | "bad-proof";
  };

  // --- sandbox: what a command left in git control files that would run a program ---
  /** After a command, git settings that run programs were removed or control files moved aside
   * (src/guards/git-repair/); each original is kept under `quarantine`. */
  "sandbox/git-repaired": {
    callId: string;
    repairs: {
      path: string;
      action: "settings-removed" | "quarantined";
      settings: string[];
      quarantine: string;
    }[];
  };

  // --- planning (P2) ---
  "plan/mode": { mode: "plan" | "default" };

  // --- workspace trust (SECURITY.md row 1d) ---
  /**
   * Project instruction files or skills left out of the context because no person accepted their content:
   * `new` (never accepted), `changed` (another content was), `unreviewed` (trusted before review existed).
   * `accept` is the command that reviews them.
   */
  "instructions/withheld": {
    files: { path: string; kind: "instructions" | "skill"; reason: "new" | "changed" | "unreviewed" }[];
    accept: string;
  };
}

/**
 * A plugin's own events, by declaration merging (as hooks are declared):
 * `declare module ".../log/events.js" { interface PluginEventDataMap { "files/observed": {...} } }`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging
export interface PluginEventDataMap {}

export interface EventDataMap extends CoreEventDataMap, PluginEventDataMap {}

export type EventType = keyof EventDataMap;
export type CoreEventType = keyof CoreEventDataMap;

export const EVENT_TYPES = [
  "session/start",
  "session/end-seed",
  "session/archived",
  "session/title",
  "session/cwd",
  "agent/status",
  "agent/inbox/spliced",
  "agent/error",
  "turn/start",
  "turn/end",
  "step/start",
  "step/end",
  "system/message",
  "developer/message",
  "user/message",
  "assistant/message",
  "assistant/attempt",
  "request/header",
  "request/context",
  "llm/retry",
  "llm/retry-started",
  "tool/decision",
  "tool/call",
  "tool/result",
  "compaction/start",
  "compaction/summary",
  "compaction/end",
  "compaction/prune",
  "job/started",
  "job/finished",
  "goal/updated",
  "goal/round",
  "subagent/started",
  "subagent/settled",
  "approval/requested",
  "approval/answered",
  "approval/reviewed",
  "question/asked",
  "question/answered",
  "answer/rejected",
  "sandbox/git-repaired",
  "plan/mode",
  "instructions/withheld",
] as const satisfies readonly CoreEventType[];

// Compile-time check that EVENT_TYPES lists every key of CoreEventDataMap.
type Missing = Exclude<CoreEventType, (typeof EVENT_TYPES)[number]>;
const _allListed: Missing extends never ? true : Missing = true;
void _allListed;

/** A stored event: `{sessionId, seq, type, at, turn?, step?, data}`. */
export type LogEvent<T extends EventType = EventType> = {
  [K in T]: {
    sessionId: string;
    seq: number;
    type: K;
    /** ISO-8601 UTC timestamp. */
    at: string;
    turn?: number;
    step?: number;
    data: EventDataMap[K];
  };
}[T];

/** An event before the store gives it a session, a seq and (unless given) a time. */
export type NewEvent<T extends EventType = EventType> = {
  [K in T]: { type: K; data: EventDataMap[K]; turn?: number; step?: number; at?: string };
}[T];

export function newEvent<K extends EventType>(
  type: K,
  data: EventDataMap[K],
  where: { turn?: number; step?: number } = {},
): NewEvent<K> {
  return { type, data, ...where } as NewEvent<K>;
}

/** Whether an event is one of the core types (a plugin's own events are not). */
export function isCoreEvent(event: LogEvent): event is LogEvent<CoreEventType> {
  return CORE_TYPES.has(event.type);
}
const CORE_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);

export function assertNever(value: never, what = "value"): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
