/**
 * Which code a serve bench runs: the built CLI (`dist/cli/main.js`, what an installed `bdsh` runs) by default,
 * or the sources through tsx with BENCH_SOURCES=1. tsx compiles with esbuild's `keepNames`, which wraps every
 * function in a `__name(…)` call: more heap per open agent and more CPU per turn than the build, so figures
 * taken through tsx overstate what a deployment pays.
 *
 * A stale build measures old code: `requireBuild()` refuses a `dist/` older than any file under `src/` or
 * `web/` (the test suite's own check, test/support/build-age.ts), and says how to build. `BDSH_TEST_MAIN`
 * (another commit's build, for a before/after in one run) skips the check.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildIsCurrent } from "../../test/support/build-age.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = join(ROOT, "dist/cli/main.js");

/** Whether this run uses the build (the default) rather than the sources through tsx (BENCH_SOURCES=1). */
export const RUNS_BUILT = process.env.BENCH_SOURCES !== "1";

/** What the bench header prints about the code it runs. */
export const CODE_RUN = RUNS_BUILT
  ? `built (${process.env.BDSH_TEST_MAIN || "dist/cli/main.js"})`
  : "sources through tsx (BENCH_SOURCES=1)";

/** Throws, saying how to build, when the build is missing or older than the sources (see the header). */
export function requireBuild(): void {
  if (!RUNS_BUILT || process.env.BDSH_TEST_MAIN) return;
  if (!buildIsCurrent(ROOT))
    throw new Error(
      `this bench runs the built server and ${MAIN} is missing or older than the sources: run \`npm run build\` first, or set BENCH_SOURCES=1 to run the sources through tsx`,
    );
}

/**
 * The built counterpart of a module under `src/` (`presets/open-agent.ts` → `dist/presets/open-agent.js`), in
 * the build `BDSH_TEST_MAIN` belongs to when it is set.
 */
export function builtModule(sourcePath: string): string {
  const dist = process.env.BDSH_TEST_MAIN ? dirname(dirname(process.env.BDSH_TEST_MAIN)) : join(ROOT, "dist");
  return join(dist, sourcePath.replace(/\.tsx?$/, ".js"));
}
