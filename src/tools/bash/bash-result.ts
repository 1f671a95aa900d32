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
 *   [sandbox: file access denied under <mode> mode] (+ the escalation line when `escalation` allows it)
 *   [sandbox: network access denied under sandbox_network <off|proxy> — …] (`networkDenied`)
 *
 * `sandboxDenialSeen` decides the denial marker: stderr says `Read-only file system`
 * (EROFS: every path outside the writable roots, `/tmp` included, is a read-only mount), `Device or
 * resource busy` (EBUSY: replacing a protected mount point), or `Permission
 * denied` (EACCES) for a path outside the writable roots.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
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
  /** T17: whether to add the escalation line (approval is not `never`); default true. */
  escalation?: boolean;
  /** The network denial marker (sandbox-network.ts `networkDenialText`), when a connection failed. */
  networkDenied?: string;
};

/** EROFS; EBUSY is a rename or removal of a protected mount point (`.git`, `.git/config`, `.bdsh`). */
const EROFS = /Read-only file system|Device or resource busy/;
const EACCES_LINE = /Permission denied/;
/** `touch: cannot touch '/x': Permission denied`, `bash: /x: Permission denied`, `bash: line 1: /x: ...`. */
const QUOTED = /['‘"]([^'’"\n]+)['’"]/g;
const COLON_PATH = /(?:^|: )((?:\/|\.{1,2}\/|~)[^:\n]*): Permission denied/;

function outside(path: string, cwd: string, roots: readonly string[]): boolean {
  const absolute = resolve(cwd, path);
  return !roots.some((root) => {
    const inside = relative(root, absolute);
    return inside === "" || (inside.split(sep)[0] !== ".." && !isAbsolute(inside));
  });
}

/** Whether a sandboxed command's stderr shows a denial by the sandbox (see the header). */
export function sandboxDenialSeen(stderr: string, cwd: string, writableRoots: readonly string[]): boolean {
  if (EROFS.test(stderr)) return true;
  for (const line of stderr.split("\n")) {
    if (!EACCES_LINE.test(line)) continue;
    const candidates = [...line.matchAll(QUOTED)].map((m) => m[1]!);
    const colon = COLON_PATH.exec(line)?.[1];
    if (colon) candidates.push(colon);
    if (candidates.some((path) => outside(path, cwd, writableRoots))) return true;
  }
  return false;
}

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
    if (outcome.sandboxDenied !== "danger-full-access" && outcome.escalation !== false) {
      lines.push(ESCALATION_HINT);
    }
  }
  if (outcome.networkDenied) lines.push(outcome.networkDenied);
  return lines.join("\n");
}
