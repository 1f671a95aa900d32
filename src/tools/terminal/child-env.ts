/**
 * The environment of every child process (issue 5 item 3; Hermes `strip_env_keys`).
 *
 * Invariants:
 * - Provider keys of the presets, `DATABASE_URL`, `BDSH_SERVER_TOKEN`, any `*_API_KEY`, and the configured
 *   `terminal.strip_env_keys` are removed unconditionally; the canary test runs `env` to prove it.
 * - Extra variables (T7's `NO_COLOR=1`, …) are added after stripping, so they cannot re-add a secret name.
 */

export const PROVIDER_SECRET_KEYS = [
  "DEEPSEEK_API_KEY",
  "TOGETHER_API_KEY",
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "OPENROUTER_API_KEY",
  "BDSH_API_KEY",
  "DATABASE_URL",
  "BDSH_SERVER_TOKEN",
] as const;

const SECRET_PATTERN = /_API_KEY$/;

export function childEnvironment(
  base: NodeJS.ProcessEnv,
  stripKeys: readonly string[],
  extra: Record<string, string> = {},
): Record<string, string> {
  const strip = new Set<string>([...PROVIDER_SECRET_KEYS, ...stripKeys]);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value === undefined || strip.has(key) || SECRET_PATTERN.test(key)) continue;
    out[key] = value;
  }
  for (const [key, value] of Object.entries(extra)) {
    if (!strip.has(key) && !SECRET_PATTERN.test(key)) out[key] = value;
  }
  return out;
}
