/**
 * Approvals and pending questions (T16, T18) and goals (P3–P6) over HTTP. Thin: the log says what is
 * pending (./interactions.ts), answers are inbox rows any server can queue, and goal commands go through
 * the planning layer's own `runGoalCommand` on this server's agent of the session.
 */
import type { Static } from "typebox";
import { FeatureMissingError, type StandardAgent } from "../presets/standard-agent.js";
import type { Store } from "../store/store.js";
import type { AnswerSigner } from "./answer-proof.js";
import { ApiError } from "./api-error.js";
import { pendingInteractions, queueAnswer } from "./interactions.js";
import type { RouteTable } from "./openapi.js";
import {
  AnswerAccepted,
  AnswerBody,
  errorResponses,
  Goal,
  GoalBody,
  GoalResult,
  PendingInteractions,
  SessionId,
} from "./schemas.js";
import { requireSession } from "./session-routes.js";
import type { SessionRunner } from "./session-runner.js";

export function registerInteractionRoutes(
  routes: RouteTable,
  context: { store: Store; runner: SessionRunner<StandardAgent>; signer: AnswerSigner },
): void {
  const { store, runner, signer } = context;

  routes.add(
    "GET",
    "/v1/sessions/:id/approvals",
    {
      summary: "Pending approvals and questions of the running turn",
      params: SessionId,
      response: { 200: PendingInteractions, ...errorResponses },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SessionId>;
      await requireSession(store, id);
      return pendingInteractions(await store.read(id));
    },
  );

  routes.add(
    "POST",
    "/v1/sessions/:id/approvals",
    {
      summary: "Answer an approval ({approvalId, decision}) or a question ({questionId, answers})",
      params: SessionId,
      body: AnswerBody,
      response: { 202: AnswerAccepted, ...errorResponses },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SessionId>;
      const body = request.body as Static<typeof AnswerBody>;
      await requireSession(store, id);
      const events = await store.read(id);
      const pending = pendingInteractions(events);
      reply.status(202);
      if ("approvalId" in body) {
        if (!pending.approvals.some((a) => a.id === body.approvalId))
          throw new ApiError(404, "NOT_PENDING", `no pending approval ${body.approvalId}`);
        const item = await queueAnswer(store, signer, id, {
          kind: "approval",
          id: body.approvalId,
          decision: body.decision,
        });
        return { id: item.id, queued: true };
      }
      if (pending.questions.some((q) => q.id === body.questionId)) {
        const item = await queueAnswer(store, signer, id, {
          kind: "question",
          id: body.questionId,
          answers: body.answers,
        });
        return { id: item.id, queued: true };
      }
      // T18: the question timed out (pending); the answer arrives as a user message naming the call.
      const asked = events.find((e) => e.type === "question/asked" && e.data.id === body.questionId);
      const answered = events.some((e) => e.type === "question/answered" && e.data.id === body.questionId);
      if (asked?.type !== "question/asked" || answered)
        throw new ApiError(404, "NOT_PENDING", `no open question ${body.questionId}`);
      const text = JSON.stringify({
        answer_to_pending_question: {
          callId: asked.data.callId,
          questions: asked.data.questions,
          answers: body.answers,
        },
      });
      const item = await runner.submit(id, {
        queue: "next-turn",
        mode: "followup",
        source: "human",
        text,
      });
      return { id: item.id, queued: true };
    },
  );

  routes.add(
    "GET",
    "/v1/sessions/:id/goal",
    { summary: "The session's goal", params: SessionId, response: { 200: Goal, ...errorResponses } },
    async (request) => {
      const { id } = request.params as Static<typeof SessionId>;
      await requireSession(store, id);
      return { goal: (await store.planning.getGoal(id)) ?? null };
    },
  );

  routes.add(
    "POST",
    "/v1/sessions/:id/goal",
    {
      summary: "Create, edit, pause, resume or clear the goal; create and resume queue a round",
      params: SessionId,
      body: GoalBody,
      response: { 200: GoalResult, ...errorResponses },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SessionId>;
      const body = request.body as Static<typeof GoalBody>;
      await requireSession(store, id);
      if ((body.action === "create" || body.action === "edit") && !body.objective)
        throw new ApiError(400, "BAD_REQUEST", `${body.action} needs an objective`);
      const agent = await runner.agent(id);
      const command =
        body.action === "create" || body.action === "edit"
          ? { kind: body.action, objective: body.objective ?? "" }
          : { kind: body.action };
      const message = await agent
        .goalCommand(command, () => void runner.wake(id).catch(() => undefined))
        .catch((error: unknown) => {
          if (error instanceof FeatureMissingError)
            throw new ApiError(409, "NO_GOALS", "this server's agents have no goal plugin");
          throw error;
        });
      return { message, goal: (await store.planning.getGoal(id)) ?? null };
    },
  );
}
