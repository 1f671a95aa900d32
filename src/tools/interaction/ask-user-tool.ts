/**
 * `ask_user_question` (T18): an explicit pause for the user.
 *
 * The `questionAnswerer` service answers. A terminal answerer blocks until the user replies; a timed one
 * (web UI, headless) resolves `undefined` after its timeout and the tool returns T18's pending JSON, so
 * the model keeps working and the answer arrives later as a user message. A delegated child (depth > 0)
 * cannot ask: T18's subagent text. No answerer: the no-channel error.
 * Result: `{"answers":[…]}`.
 */

import { type Static, Type, toolParameters } from "../schema.js";
import type { ToolDefinition, ToolOutput } from "../types.js";

export type Question = { question: string; options?: string[] };

export interface QuestionAnswerer {
  /** The answers in question order, or `undefined` when none arrived in time (pending). */
  ask(request: {
    callId: string;
    questions: readonly Question[];
    signal: AbortSignal;
  }): Promise<string[] | undefined>;
}

declare module "../types.js" {
  interface ToolServiceMap {
    questionAnswerer: QuestionAnswerer;
  }
}

export const PENDING_MESSAGE =
  "No answers came back before the wait ended. The questions are still pending, not skipped: go on with work that does not depend on them. The user may answer later; that reply arrives as a user message marked answer_to_pending_question, with this callId and the questions. Silence is not permission.";

export const SUBAGENT_TEXT =
  "human interaction is unavailable while the calling agent is owned by another live agent; include the unresolved question or decision in the child agent's final result";

const AskUserQuestionSchema = Type.Object(
  {
    questions: Type.Array(
      Type.Object(
        {
          question: Type.String(),
          options: Type.Optional(Type.Array(Type.String())),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 4 },
    ),
  },
  { additionalProperties: false },
);

export const askUserQuestionTool: ToolDefinition<Static<typeof AskUserQuestionSchema>> = {
  name: "ask_user_question",
  toolset: "interaction",
  description:
    'Ask the user a short question when you need a confirmation, a choice, or missing information before going on. Offer options when the answer is a choice; put the one you recommend first, marked "(Recommended)".',
  parameters: toolParameters(AskUserQuestionSchema),
  concurrency: "exclusive",
  async execute(args, exec): Promise<ToolOutput> {
    if (exec.session.depth > 0) throw new Error(SUBAGENT_TEXT);
    const answerer = exec.services.get("questionAnswerer");
    if (!answerer)
      throw new Error(
        `tool "ask_user_question" requires a user to answer, but no answer channel is available`,
      );
    const answers = await answerer.ask({
      callId: exec.callId,
      questions: args.questions,
      signal: exec.signal,
    });
    if (answers === undefined) {
      return { text: JSON.stringify({ pending: true, callId: exec.callId, message: PENDING_MESSAGE }) };
    }
    return { text: JSON.stringify({ answers }) };
  },
};
