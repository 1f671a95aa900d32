/**
 * Approvals (T16) and pending questions (T18) answered over HTTP by any server.
 *
 * The request is durable: the driving agent appends `approval/requested` / `question/asked` and flushes it
 * before it waits, so every server can list it from the log. The answer travels as an inert inbox row
 * (`mode: inject`, metadata `{answer: {...}}`): enqueuing NOTIFYs every server, and the waiting agent's
 * server finds it, discards the row (it never becomes a user message), and appends
 * `approval/answered` / `question/answered`.
 *
 * Invariants:
 * - Rows are the truth: the waiter re-reads the inbox on every notification and on `resync`, so a lost
 *   notification only delays an answer. An abort (cancel, lost lease) ends the wait as `cancel`.
 * - Questions are timed (T18 "timed mode suits an async web UI"): after `questionTimeoutMs` the tool returns
 *   T18's pending JSON; a later answer is then queued as a normal follow-up that names the call.
 * - An answer's inbox text is honest on its own, should a step ever splice it before it is discarded.
 * - An answer decides only with a proof made with the approval key (./answer-proof.ts): a command that
 *   reaches the store can write an answer row, but not its proof. A row for the awaited request whose
 *   proof is missing or wrong is discarded, recorded as `answer/rejected`, and the request keeps waiting.
 */
import type { ApprovalDecision, LogEvent } from "../log/events.js";
import type { Plugin, PluginContext } from "../loop/plugin.js";
import type { InboxItem, Store } from "../store/store.js";
import type { ApprovalRequest, Approvals } from "../tools/approvals.js";
import type { Question, QuestionAnswerer } from "../tools/interaction/ask-user-tool.js";
import { recordApproval, recordQuestions } from "../tools/interaction/recorded.js";
import type { ApprovalAnswer } from "../tools/types.js";
import type { Answer, AnswerSigner } from "./answer-proof.js";

function answerOf(item: InboxItem): Answer | undefined {
  const answer = item.metadata.answer;
  if (!answer || typeof answer !== "object") return undefined;
  const a = answer as Record<string, unknown>;
  if (a.kind === "approval" && typeof a.id === "string" && typeof a.decision === "string")
    return { kind: "approval", id: a.id, decision: a.decision as ApprovalDecision };
  if (a.kind === "question" && typeof a.id === "string" && Array.isArray(a.answers))
    return { kind: "question", id: a.id, answers: a.answers.map(String) };
  return undefined;
}

/** Waits for a proven answer row with this id; discards it once found, and every forged one met. */
async function awaitAnswer(
  ctx: PluginContext,
  signer: AnswerSigner,
  id: string,
  signal: AbortSignal,
  timeoutMs?: number,
) {
  const { inbox, sessionId } = ctx;
  let wake: (() => void) | undefined;
  let dirty = true;
  const poke = () => {
    dirty = true;
    wake?.();
  };
  const unsubscribe = inbox.watch(poke);
  signal.addEventListener("abort", poke);
  const timer = timeoutMs === undefined ? undefined : setTimeout(poke, timeoutMs);
  const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
  try {
    for (;;) {
      if (signal.aborted || Date.now() >= deadline) return undefined;
      if (dirty) {
        dirty = false;
        for (const item of await inbox.pending()) {
          const answer = answerOf(item);
          if (answer?.id !== id) continue;
          await inbox.discard([item.id]);
          const failure = signer.check(sessionId, answer, item.metadata.proof);
          if (failure === undefined) return answer;
          ctx.log.add({
            type: "answer/rejected",
            data: { id, kind: answer.kind, inboxId: item.id, reason: failure },
          });
          await ctx.log.flush();
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    if (timer) clearTimeout(timer);
    signal.removeEventListener("abort", poke);
    unsubscribe();
  }
}

class StoreApprovals implements Approvals {
  constructor(
    private readonly ctx: PluginContext,
    private readonly signer: AnswerSigner,
  ) {}

  async request(request: ApprovalRequest): Promise<ApprovalAnswer> {
    const { ctx, signer } = this;
    const decision = await recordApproval(ctx.log, request, async (id) => {
      const answer = await awaitAnswer(ctx, signer, id, request.signal);
      return answer?.kind === "approval" ? answer.decision : "cancel";
    });
    return decision === "allow-always" ? "allow-session" : decision;
  }
}

class StoreQuestions implements QuestionAnswerer {
  constructor(
    private readonly ctx: PluginContext,
    private readonly signer: AnswerSigner,
    private readonly timeoutMs: number,
  ) {}

  async ask(request: { callId: string; questions: readonly Question[]; signal: AbortSignal }) {
    const { ctx, signer, timeoutMs } = this;
    return recordQuestions(ctx.log, request, async (id) => {
      const answer = await awaitAnswer(ctx, signer, id, request.signal, timeoutMs);
      return answer?.kind === "question" ? answer.answers : undefined; // T18 pending; a later answer comes as a user message
    });
  }
}

/** Installs the store-backed `approvals` and `questionAnswerer` services (after the tools plugin). */
export function httpInteractionsPlugin(options: { questionTimeoutMs: number; signer: AnswerSigner }): Plugin {
  const { signer } = options;
  return {
    name: "http-interactions",
    setup(ctx) {
      ctx.services.set("approvals", new StoreApprovals(ctx, signer));
      ctx.services.set("questionAnswerer", new StoreQuestions(ctx, signer, options.questionTimeoutMs));
    },
  };
}

export type PendingApproval = {
  id: string;
  callId: string;
  tool: string;
  summary: string;
  reason?: string;
  seq: number;
};
export type PendingQuestion = { id: string; callId: string; questions: unknown[]; seq: number };

/** Requests in the log without an answer after them, and not closed by a later `turn/end`. */
export function pendingInteractions(events: readonly LogEvent[]): {
  approvals: PendingApproval[];
  questions: PendingQuestion[];
} {
  const approvals = new Map<string, PendingApproval>();
  const questions = new Map<string, PendingQuestion>();
  for (const event of events) {
    if (event.type === "approval/requested") approvals.set(event.data.id, { ...event.data, seq: event.seq });
    else if (event.type === "approval/answered") approvals.delete(event.data.id);
    else if (event.type === "question/asked") questions.set(event.data.id, { ...event.data, seq: event.seq });
    else if (event.type === "question/answered") questions.delete(event.data.id);
    else if (event.type === "turn/end") {
      approvals.clear();
      questions.clear();
    }
  }
  return { approvals: [...approvals.values()], questions: [...questions.values()] };
}

/**
 * Queues an answer, with its proof, for whichever server waits on it; the row is inert unless a waiter
 * takes it.
 */
export async function queueAnswer(
  store: Store,
  signer: AnswerSigner,
  sessionId: string,
  answer: Answer,
): Promise<InboxItem> {
  const text =
    answer.kind === "approval"
      ? `(approval ${answer.id} answered: ${answer.decision})`
      : `(answer to question ${answer.id}: ${JSON.stringify(answer.answers)})`;
  return store.enqueueInbox(sessionId, {
    queue: "next-step",
    mode: "inject",
    source: "human",
    text,
    metadata: { answer, proof: signer.sign(sessionId, answer) },
  });
}
