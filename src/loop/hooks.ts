/**
 * The agent loop's hooks (L5, L10, L15; ARCHITECTURE "Layers"), added to the hook bus by declaration
 * merging. The loop dispatches them; plugins decide.
 *
 * - `agent/pre-step` (waterfall): before every step. Listeners add user messages (runtime context, time,
 *   reminders) or reject the step (L18: the turn ends `blocked`).
 * - `agent/request` (waterfall): the request about to be frozen and sent.
 * - `agent/request-error` (waterfall): a failed attempt; a listener may answer `retry` (L10: the same step is
 *   re-requested from the same durable history) or leave `throw` (the turn ends `error`).
 * - `agent/turn-stopping` (serial, L5): the turn is about to end; a listener that injects input keeps it open.
 * - `agent/status` (serial): `idle` / `running` transitions (goal rounds and settlements listen here).
 * - `agent/turn-start` (serial): a turn opened, with the inbox rows it claimed (their metadata carries the
 *   trace context of whatever queued them: ./trace-carrier.ts).
 * - `agent/turn-end` (serial): after `turn/end` is durable, with its reason.
 * - `agent/repaired` (serial, R1): a turn a crash left open was closed on taking the lease; plugins whose
 *   state assumed that turn would go on (an armed goal, R2) record that it does not.
 * - `agent/ready` (serial): after every plugin's setup, before the first turn.
 * - `agent/close` (serial): the agent is closed; plugins stop background work (jobs, terminals).
 */
import type { MessageAbout, NewEvent, StepResult, TurnEndReason, UserSource } from "../log/events.js";
import type { AssistantBlock } from "../log/messages.js";
import type { LlmError, ModelRequest } from "../model/types.js";
import type { InboxItem } from "../store/store.js";

export type PendingUserMessage = { text: string; source: UserSource; about?: MessageAbout };

export type StepInfo = { sessionId: string; turn: number; step: number; firstStepOfTurn: boolean };

export type PreStepState = StepInfo & {
  /** Messages to append before the step's request, in order. */
  messages: PendingUserMessage[];
  /**
   * Set to end the turn `blocked` instead of running the step (L18). `code` (default `BLOCKED`) and `reason`
   * become the turn's error, which every view prints: say which limit or rule ended it and what lifts it.
   */
  reject?: { reason: string; code?: string };
  /** Declares that this step starts a new request series (L12: e.g. after a goal round). */
  startsRequestSeries?: boolean;
};

export type RequestState = StepInfo & { request: ModelRequest };

export type RequestErrorDecision = { kind: "throw" } | { kind: "retry"; delayMs: number };

export type RequestErrorState = StepInfo & {
  error: LlmError;
  /** 1-based number of the attempt that failed, counted per step (M18). */
  attempt: number;
  signal: AbortSignal;
  decision: RequestErrorDecision;
  /** Adds a log-only event (e.g. `llm/retry`). */
  emit(event: NewEvent): void;
};

export type TurnStoppingEvent = StepInfo & {
  result: Extract<StepResult, "completed" | "max-tokens">;
  /** The final assistant message's blocks (empty when the step produced none). */
  lastBlocks: readonly AssistantBlock[];
  /** Queues a user message for the next step, which keeps the turn open (L5). */
  inject(message: PendingUserMessage): void;
  /** How many times listeners kept this turn open so far. */
  keptOpen: number;
};

export type StatusEvent = { sessionId: string; status: "idle" | "running" };

export type CloseEvent = { sessionId: string };

export type TurnStartEvent = { sessionId: string; turn: number; claimed: readonly InboxItem[] };

export type TurnEndEvent = {
  sessionId: string;
  turn: number;
  reason: TurnEndReason;
  /** An `aborted` turn was cancelled to hand the session to another server (a graceful stop), not by a person. */
  handover?: boolean;
};

export type RepairedEvent = { sessionId: string; turn: number };

declare module "../hooks/hook-bus.js" {
  interface HookWaterfalls {
    "agent/pre-step": PreStepState;
    "agent/request": RequestState;
    "agent/request-error": RequestErrorState;
  }
  interface HookSerials {
    "agent/turn-stopping": TurnStoppingEvent;
    "agent/status": StatusEvent;
    "agent/turn-start": TurnStartEvent;
    "agent/turn-end": TurnEndEvent;
    "agent/repaired": RepairedEvent;
    /** Every plugin is set up: a plugin may now read what later plugins registered (tools, sections). */
    "agent/ready": CloseEvent;
    /** The agent is being closed: stop background work, release resources. */
    "agent/close": CloseEvent;
  }
}
