/** Runs the real `bdsh` CLI in a child process (from source, through tsx) and collects its output. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
/** tsx's loader by absolute URL, so the child can run from any working directory. */
export const TSX_LOADER = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;

export type CliResult = { code: number | null; stdout: string; stderr: string };

export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
  /** Written to the child's stdin (closed after); none: stdin is closed at once. */
  input?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TSX_LOADER, MAIN, ...args], {
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
