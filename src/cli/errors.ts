/**
 * How the CLI fails (INTERFACE.md "Exit codes and errors"): one line on stderr, `bdsh: <CODE>: <message>`,
 * exit 2 for usage and configuration errors (nothing was sent to a model), 1 for a run that ended otherwise.
 */
import { ConfigError } from "../config/load.js";
import { Redactor } from "../log/redact.js";
import { SetupError } from "../presets/setup-error.js";

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** An error the CLI reports with a code and exit status, without a stack trace. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number = EXIT_FAILED,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export function usageError(message: string): CliError {
  return new CliError("USAGE", message, EXIT_USAGE);
}

/**
 * The one stderr line for an error, and the exit code it maps to; known secret values are redacted from it
 * (an error message can carry a key the process read).
 */
export function describeFailure(
  error: unknown,
  redactor: Redactor = Redactor.none,
): { line: string; exitCode: number } {
  const { line, exitCode } = failureLine(error);
  return { line: redactor.text(line), exitCode };
}

function failureLine(error: unknown): { line: string; exitCode: number } {
  if (error instanceof ConfigError) return { line: `bdsh: CONFIG: ${error.message}`, exitCode: EXIT_USAGE };
  if (error instanceof CliError)
    return { line: `bdsh: ${error.code}: ${error.message}`, exitCode: error.exitCode };
  // Opening an agent failed before anything was sent (no key, unknown provider or session): exit 2, from
  // every command that opens one (`run`, `chat`, `schedules run`, …).
  if (error instanceof SetupError)
    return { line: `bdsh: ${error.code}: ${oneLine(error.message)}`, exitCode: EXIT_USAGE };
  const code =
    error && typeof error === "object" && "code" in error && typeof error.code === "string"
      ? error.code
      : "ERROR";
  const message = error instanceof Error ? error.message : String(error);
  return { line: `bdsh: ${code}: ${oneLine(message)}`, exitCode: EXIT_FAILED };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}
