/**
 * Runs the real `bdsh` CLI in a child process and collects its output. The CLI is the built one
 * (`dist/cli/main.js`, kept current by the global setup), as installed users run it.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * The built CLI's entry point. `BDSH_TEST_MAIN` points the tests at another build (an older commit's
 * `dist/cli/main.js`), to see which tests failed before a change: test-only, never read by bdsh itself.
 */
export const BDSH_MAIN =
  process.env.BDSH_TEST_MAIN || fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
/** The argv that starts `bdsh` (append its arguments). */
export const BDSH: readonly string[] = [process.execPath, BDSH_MAIN];
/**
 * tsx's loader by absolute URL, so a child can run from any working directory: for the tests' own agent
 * scripts under test/.../fixtures, which import the sources.
 */
export const TSX_LOADER = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;

export type CliResult = { code: number | null; stdout: string; stderr: string };

export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
  /** Written to the child's stdin (closed after); none: stdin is closed at once. */
  input?: string,
): Promise<CliResult> {
  return runNode([BDSH_MAIN, ...args], env, cwd, input);
}

/** Runs `node` with `argv` (node's own flags first, e.g. `--import`, then a script and its arguments). */
export function runNode(
  argv: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
  input?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      env: { PATH: process.env.PATH, ...env },
      cwd: cwd ?? process.cwd(),
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (input !== undefined) child.stdin?.end(input);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The approval a person answered in session `id`, as `bdsh sessions events --json` shows it: the request's
 * data and the decision recorded for it (`undefined` when none was).
 */
export async function answeredApproval(
  id: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ requested?: Record<string, unknown>; decision?: unknown }> {
  const { stdout } = await runCli(["sessions", "events", id, "--json"], env, cwd);
  const events = stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> });
  const requested = events.find((e) => e.type === "approval/requested")?.data;
  const answered = events.find((e) => e.type === "approval/answered" && e.data.id === requested?.id);
  return { ...(requested ? { requested } : {}), ...(answered ? { decision: answered.data.decision } : {}) };
}
