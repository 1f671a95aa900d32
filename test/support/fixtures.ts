/**
 * How a test starts a child-process fixture: `node` on its compiled form (support/fixture-build.ts, made by the
 * global setup), or through the tsx loader when a file runs outside that setup.
 */
import { inject } from "vitest";
import { TSX_LOADER } from "./run-cli.js";

/** The node arguments that run the fixture at `source` (an absolute `.ts` path). */
export function fixtureArgv(source: string): string[] {
  const compiled = inject("compiledFixtures")?.[source];
  return compiled ? [compiled] : ["--import", TSX_LOADER, source];
}
