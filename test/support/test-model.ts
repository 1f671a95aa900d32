/** The model route every loop-level test drives: the deepseek preset pointed at the fake provider. */
import { modelSettingsFor } from "../../src/loop/model-settings.js";
import { resolveRoute } from "../../src/model/catalog.js";

export const TEST_ROUTE = resolveRoute({ provider: "deepseek" }, {});

export const TEST_MODEL = modelSettingsFor(TEST_ROUTE, { id: "deepseek-flash", effort: "high" });

/** TEST_MODEL with some fields changed (another model id, effort or window). */
export function testModel(overrides: Partial<typeof TEST_MODEL>) {
  return { ...TEST_MODEL, ...overrides };
}
