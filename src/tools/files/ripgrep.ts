/**
 * Running ripgrep for `glob` and `grep` (T13).
 *
 * Invariants:
 * - The default binary is the one `@vscode/ripgrep` ships in its platform package
 *   (`@vscode/ripgrep-<platform>-<arch>`, installed from the registry with no download), so a fresh
 *   `npm install` is enough: no system `rg` is needed.
 * - `BDSH_RG_PATH` (a path, or a name looked up on PATH) overrides it. It is read from the harness's own
 *   process environment only: no config file carries it, so a file the model writes into the workspace
 *   (`.bdsh/config.yaml`, …) cannot choose which binary the harness runs. A set override that does not run
 *   is an error, never silently replaced.
 * - Without the packaged binary (optional dependencies skipped) a system `rg` on PATH is used; with
 *   neither, both tools are unavailable, and `ripgrepUnavailable()` says why and what to do.
 * - The choice is made once per process (`ripgrepBinary`), on first use.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { childEnvironment } from "../terminal/child-env.js";

/** The override variable; documented in the README (configuration, environment). */
export const RG_PATH_ENV = "BDSH_RG_PATH";

/** Which ripgrep runs: the packaged one, the `BDSH_RG_PATH` override, or a system `rg` found on PATH. */
export type RipgrepChoice =
  | { ok: true; path: string; source: "packaged" | "override" | "system"; version: string; note?: string }
  | { ok: false; error: string };

/** `@vscode/ripgrep`'s binary path, or why it is missing (its module throws when the platform package is). */
const packaged: { path: string } | { error: string } = await import("@vscode/ripgrep").then(
  (module) =>
    existsSync(module.rgPath) ? { path: module.rgPath } : { error: `${module.rgPath} does not exist` },
  (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
);

/** The first line of `binary --version`, or undefined when it does not run. */
function versionOf(binary: string, env: NodeJS.ProcessEnv): string | undefined {
  const result = spawnSync(binary, ["--version"], { encoding: "utf8", env, timeout: 10_000 });
  if (result.status !== 0) return undefined;
  return result.stdout.split("\n")[0]?.trim() || "ripgrep";
}

/** Decides which ripgrep to run, from `env` (the harness's process environment) alone. */
export function chooseRipgrep(env: NodeJS.ProcessEnv = process.env): RipgrepChoice {
  const override = env[RG_PATH_ENV]?.trim();
  if (override) {
    const version = versionOf(override, env);
    return version
      ? { ok: true, path: override, source: "override", version }
      : { ok: false, error: `${RG_PATH_ENV}=${override} does not run (\`${override} --version\` failed)` };
  }
  if ("path" in packaged) {
    const version = versionOf(packaged.path, env);
    if (version) return { ok: true, path: packaged.path, source: "packaged", version };
  }
  const missing =
    "path" in packaged
      ? `the packaged ripgrep (${packaged.path}) does not run`
      : `the packaged ripgrep is missing (${packaged.error})`;
  const version = versionOf("rg", env);
  if (version) return { ok: true, path: "rg", source: "system", version, note: missing };
  return {
    ok: false,
    error: `${missing}, and there is no \`rg\` on PATH: reinstall with optional dependencies (\`npm install --include=optional\`), or set ${RG_PATH_ENV} to a ripgrep binary`,
  };
}

let chosen: RipgrepChoice | undefined;

/** The ripgrep this process uses, chosen on first call. */
export function ripgrepBinary(): RipgrepChoice {
  chosen ??= chooseRipgrep(process.env);
  return chosen;
}

export function ripgrepAvailable(): boolean {
  return ripgrepBinary().ok;
}

export type RipgrepResult = { stdout: Buffer; stderr: string; exitCode: number | null };

/** Runs `rg args…` in `cwd`; exit 1 (no match) is a normal result. Aborting the signal kills rg. */
export function runRipgrep(
  args: readonly string[],
  cwd: string,
  signal: AbortSignal,
): Promise<RipgrepResult> {
  const binary = ripgrepBinary();
  if (!binary.ok) return Promise.reject(new Error(`ripgrep is not available: ${binary.error}`));
  return new Promise((resolve, reject) => {
    const child = spawn(binary.path, args, {
      cwd,
      env: childEnvironment(process.env, []),
      stdio: ["ignore", "pipe", "pipe"],
      signal,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.once("error", (error) => {
      if (signal.aborted) resolve({ stdout: Buffer.concat(out), stderr: "aborted", exitCode: null });
      else reject(error);
    });
    child.once("close", (exitCode) =>
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8"), exitCode }),
    );
  });
}
