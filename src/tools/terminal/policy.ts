/**
 * The `EnvironmentPolicy` (child-env.ts) of an environment's factory options: one place that turns the
 * configured and provider keys into the policy, so every backend strips the same names.
 */
import { EnvironmentPolicy } from "./child-env.js";
import type { EnvironmentFactoryOptions } from "./environment.js";

export function policyFor(options: EnvironmentFactoryOptions): EnvironmentPolicy {
  return EnvironmentPolicy.of({
    strip: options.stripEnvKeys,
    pass: options.passEnvKeys ?? [],
    harness: options.harnessEnvKeys ?? [],
  });
}
