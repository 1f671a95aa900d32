/**
 * The text `bash` returns (T7, T8, T17). Exact markers, in this order:
 *
 *   <stdout tail>
 *   [stderr]
 *   <stderr tail>                 — or `(no output)` when both are empty
 *   [output truncated; full output: <locator>]
 *   [timed out after <ms>ms]
 *   [stopped: <reason>]
 *   [killed by signal: <sig>]
 *   [exit code: <n>]              — only when non-zero
 *   [sandbox: file access denied under <mode> mode] (+ the escalation line)
 */
import type { SandboxMode } from "../types.js";

export type BashOutcome = {
  stdout: string;
  stderr: string;
  fullOutputLocator?: string;
  truncated?: boolean;
  timedOutMs?: number;
  stopped?: string;
  signal?: string | null;
  exitCode?: number | null;
  sandboxDenied?: SandboxMode;
};

export const ESCALATION_HINT =
  "[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]";

export const movedToBackgroundText = (ms: number, jobId: string) =>
  `[still running after ${ms}ms; moved to background job ${jobId}]\nThe command keeps running in the background. You will be notified when it finishes; read newer output with job_output, stop it with job_kill.`;

export function formatBashResult(outcome: BashOutcome): string {
  const lines: string[] = [];
  const stdout = outcome.stdout.replace(/\n$/, "");
  const stderr = outcome.stderr.replace(/\n$/, "");
  if (stdout !== "") lines.push(stdout);
  if (stderr !== "") lines.push(`[stderr]\n${stderr}`);
  if (stdout === "" && stderr === "") lines.push("(no output)");
  if (outcome.truncated)
    lines.push(`[output truncated; full output: ${outcome.fullOutputLocator ?? "unavailable"}]`);
  if (outcome.timedOutMs !== undefined) lines.push(`[timed out after ${outcome.timedOutMs}ms]`);
  if (outcome.stopped) lines.push(`[stopped: ${outcome.stopped}]`);
  if (outcome.signal) lines.push(`[killed by signal: ${outcome.signal}]`);
  if (outcome.exitCode !== undefined && outcome.exitCode !== null && outcome.exitCode !== 0) {
    lines.push(`[exit code: ${outcome.exitCode}]`);
  }
  if (outcome.sandboxDenied) {
    lines.push(`[sandbox: file access denied under ${outcome.sandboxDenied} mode]`);
    if (outcome.sandboxDenied !== "danger-full-access") lines.push(ESCALATION_HINT);
  }
  return lines.join("\n");
}
