/**
 * SP2, SP3: the system prompt's fixed sections. Short and stable on purpose (SP2: behaviour guidance lives
 * in tool descriptions and user-role reminders, so the prompt and the provider's prefix cache stay put).
 * Beyond DSH (SP2 "Here"): one sentence asking the model to act in the same response when it says it
 * will do something, aimed at the "announces a step and stops" failure (§9).
 *
 * Model experience:
 * - identity: "You are an AI agent running in better-dsh, a durable agent harness."
 * - persona:  "You are a coding agent running on the {{model}} model."
 * - acting:   "When you say you will do something next, do it in the same response with a tool call…"
 */
import type { Plugin } from "../loop/plugin.js";
import { SECTION_ORDER } from "../loop/prompt.js";

export const IDENTITY_TEXT = "You are an AI agent running in better-dsh, a durable agent harness.";
export const PERSONA_TEXT = "You are a coding agent running on the {{model}} model.";
export const ACT_DONT_ANNOUNCE_TEXT =
  "When you say you will do something next, do it in the same response with a tool call; end your turn only when the work is done or you need the user.";

export function systemPromptPlugin(options: { persona?: string } = {}): Plugin {
  return {
    name: "system-prompt",
    setup(ctx) {
      ctx.prompt.addSection({ name: "identity", order: SECTION_ORDER.identity, text: IDENTITY_TEXT });
      ctx.prompt.addSection({
        name: "persona-prefix",
        order: SECTION_ORDER.personaPrefix,
        text: options.persona ?? PERSONA_TEXT,
      });
      ctx.prompt.addSection({ name: "act-dont-announce", order: 1, text: ACT_DONT_ANNOUNCE_TEXT });
    },
  };
}
