/**
 * Running ripgrep for `glob` and `grep` (T13). The system `rg` is used (Debian `ripgrep`); when it is
 * missing both tools are unavailable rather than failing at call time. `@vscode/ripgrep` cannot install
 * here (its postinstall downloads from GitHub).
 */
import { spawn, spawnSync } from "node:child_process";
import { childEnvironment } from "../terminal/child-env.js";

let present: boolean | undefined;

export function ripgrepAvailable(): boolean {
  if (present === undefined) present = spawnSync("rg", ["--version"], { stdio: "ignore" }).status === 0;
  return present;
}

export type RipgrepResult = { stdout: Buffer; stderr: string; exitCode: number | null };

/** Runs `rg args…` in `cwd`; exit 1 (no match) is a normal result. Aborting the signal kills rg. */
export function runRipgrep(
  args: readonly string[],
  cwd: string,
  signal: AbortSignal,
): Promise<RipgrepResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("rg", args, {
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
