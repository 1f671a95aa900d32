/** The model route every loop-level test drives: the deepseek preset pointed at the fake provider. */
import type { ModelSettings } from "../../src/loop/model-settings.js";

export const TEST_MODEL: ModelSettings = {
  provider: "deepseek",
  id: "deepseek-flash",
  effort: "high",
  contextWindow: 1_048_576,
  maxOutputTokens: 32_768,
  systemPromptUpdate: "in-history",
};
