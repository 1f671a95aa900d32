/** What the loop needs to know about the model route it talks to (M2, M5, L11, L12). */
import type { Effort } from "../model/types.js";

export type ModelSettings = {
  provider: string;
  id: string;
  effort: Effort;
  /** M5: true when the effort was chosen for this run; otherwise the session's logged effort wins. */
  effortExplicit?: boolean;
  contextWindow: number;
  maxOutputTokens: number;
  /** L12, M7: changed system prompts are appended in history, or node 0 is rewritten. */
  systemPromptUpdate: "in-history" | "rewrite";
};
