/** What the loop needs to know about the model route it talks to (M2, M5, L11, L12). */
import type { Route } from "../model/catalog.js";
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

/**
 * The settings of a route from the catalog (one place derives them; tests and benches
 * call this instead of retyping the preset's numbers). `overrides` wins field by field.
 */
export function modelSettingsFor(
  route: Pick<Route, "contextWindow" | "maxOutputTokens"> & {
    preset: { name: string; systemPromptUpdate: ModelSettings["systemPromptUpdate"] };
  },
  model: { id: string; effort: Effort; effortExplicit?: boolean },
  overrides: Partial<ModelSettings> = {},
): ModelSettings {
  return {
    provider: route.preset.name,
    id: model.id,
    effort: model.effort,
    ...(model.effortExplicit === undefined ? {} : { effortExplicit: model.effortExplicit }),
    contextWindow: route.contextWindow,
    maxOutputTokens: route.maxOutputTokens,
    systemPromptUpdate: route.preset.systemPromptUpdate,
    ...overrides,
  };
}
