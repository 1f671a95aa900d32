/**
 * The environment policy of every child process (Hermes
 * `strip_env_keys`, Codex `shell_environment_policy`), and the secret values it implies for redaction.
 *
 * Invariants:
 * - A variable is removed from every child when its NAME matches, case-insensitively, one of
 *   `SECRET_NAME_PATTERNS` (`*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`, `*CREDENTIAL*`) or a configured
 *   `terminal.strip_env_keys` entry (a name or a `*`/`?` glob), unless a `terminal.pass_env_keys` entry
 *   (name or glob, matched case-sensitively: loosening is exact) lets it through.
 * - The harness's own secrets are removed whatever `pass_env_keys` says: every provider preset's key
 *   variable, the `--api-key-env` variable, `BDSH_API_KEY`, `BDSH_SERVER_TOKEN`, `BDSH_APPROVAL_KEY`, the OTLP exporter's headers, any `BDSH_*` name that
 *   matches the default patterns, and `DATABASE_URL`.
 * - `*KEY*` has false positives (`KEYBOARD_LAYOUT`, `KEYMAP`): the rule stays, and `pass_env_keys` is the
 *   escape hatch. Stripping a harmless variable costs a little; passing a secret costs everything.
 * - Extra variables (T7's `NO_COLOR=1`, `TMPDIR`, …) are added after stripping and obey the same policy.
 * - `secretValues` lists what the redactor must know: the value of every stripped variable (unless the
 *   same value is also visible through a kept variable, like a path equal to `$HOME`) and the password
 *   inside `DATABASE_URL`.
 */
import { PRESETS } from "../../model/catalog.js";

export const SECRET_NAME_PATTERNS = ["*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*", "*CREDENTIAL*"] as const;

/** Every preset's key variable, and the harness's own: never passed to a child. */
export const PROVIDER_SECRET_KEYS: readonly string[] = [
  ...new Set([
    ...Object.values(PRESETS).flatMap((preset) => (preset.keyEnv ? [preset.keyEnv] : [])),
    "BDSH_API_KEY",
    "DATABASE_URL",
    "BDSH_SERVER_TOKEN",
    "BDSH_APPROVAL_KEY",
    // The OTLP exporter's headers usually carry the collector's credential.
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  ]),
];

export type EnvironmentPolicySpec = {
  /** Config `terminal.strip_env_keys`, plus keys a backend asks for: names or globs. */
  strip?: readonly string[];
  /** Config `terminal.pass_env_keys`: names or globs let through although a pattern matches them. */
  pass?: readonly string[];
  /** More harness secrets (the `--api-key-env` variable): never passed. */
  harness?: readonly string[];
};

export class EnvironmentPolicy {
  static readonly default = new EnvironmentPolicy({});
  /** Policies by spec: every agent of a process has the same config, so it builds the same policy. */
  private static readonly made = new Map<string, EnvironmentPolicy>();

  /** The policy of `spec`, built once per distinct spec (a policy is immutable; the cache is bounded). */
  static of(spec: EnvironmentPolicySpec): EnvironmentPolicy {
    const key = JSON.stringify([spec.strip ?? [], spec.pass ?? [], spec.harness ?? []]);
    let policy = EnvironmentPolicy.made.get(key);
    if (!policy) {
      if (EnvironmentPolicy.made.size >= 64) EnvironmentPolicy.made.clear();
      policy = new EnvironmentPolicy(spec);
      EnvironmentPolicy.made.set(key, policy);
    }
    return policy;
  }

  private readonly strip: RegExp;
  private readonly pass: RegExp | undefined;
  private readonly harness: ReadonlySet<string>;

  constructor(spec: EnvironmentPolicySpec) {
    this.strip = globsToRegExp([...SECRET_NAME_PATTERNS, ...(spec.strip ?? [])], "i")!;
    this.pass = globsToRegExp(spec.pass ?? [], "");
    this.harness = new Set([...PROVIDER_SECRET_KEYS, ...(spec.harness ?? [])]);
  }

  /** Whether the variable `name` is a secret of the harness itself (never passed). */
  isHarnessSecret(name: string): boolean {
    return this.harness.has(name) || (name.startsWith("BDSH_") && DEFAULT_STRIP.test(name));
  }

  /** Whether `name` is removed from child processes. */
  strips(name: string): boolean {
    if (this.isHarnessSecret(name)) return true;
    if (!this.strip.test(name)) return false;
    return this.pass === undefined || !this.pass.test(name);
  }

  /** `base` as a child sees it: stripped, then `extra` added under the same rule. */
  childEnvironment(base: NodeJS.ProcessEnv, extra: Record<string, string> = {}): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(base)) {
      if (value !== undefined && !this.strips(key)) out[key] = value;
    }
    for (const [key, value] of Object.entries(extra)) {
      if (!this.strips(key)) out[key] = value;
    }
    return out;
  }

  /** The values a redactor must know (log/redact.ts applies the minimum length). */
  secretValues(env: NodeJS.ProcessEnv): string[] {
    const visible = new Set<string>();
    const hidden: string[] = [];
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined || value === "") continue;
      if (this.strips(key)) hidden.push(value);
      else visible.add(value);
    }
    const out = hidden.filter((value) => !visible.has(value));
    out.push(...urlPassword(env.DATABASE_URL));
    return out;
  }
}

const DEFAULT_STRIP = globsToRegExp(SECRET_NAME_PATTERNS, "i")!;

/** For callers that predate `EnvironmentPolicy`: `base` stripped by the default policy plus `stripKeys`. */
export function childEnvironment(
  base: NodeJS.ProcessEnv,
  stripKeys: readonly string[],
  extra: Record<string, string> = {},
  spec: Omit<EnvironmentPolicySpec, "strip"> = {},
): Record<string, string> {
  return new EnvironmentPolicy({ ...spec, strip: stripKeys }).childEnvironment(base, extra);
}

/** The password of a `scheme://user:password@host/…` URL, as written and decoded. */
function urlPassword(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const password = new URL(url).password;
    return password === "" ? [] : [password, decodeURIComponent(password)];
  } catch {
    return [];
  }
}

/** `*` and `?` globs over whole names, as one anchored RegExp; undefined for no globs. */
function globsToRegExp(globs: readonly string[], flags: string): RegExp | undefined {
  const parts = globs
    .filter((glob) => glob !== "")
    .map((glob) =>
      [...glob]
        .map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[\\^$.|+()[\]{}]/g, "\\$&")))
        .join(""),
    );
  return parts.length === 0 ? undefined : new RegExp(`^(?:${parts.join("|")})$`, flags);
}
