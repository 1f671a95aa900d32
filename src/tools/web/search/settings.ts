/**
 * Which web search provider this configuration names, where it is, and whether its key is there: the one
 * place `web_search.*` and the key variables are read (the tools plugin, `bdsh doctor`, the redactor).
 *
 * Invariants:
 * - Key order: `web_search.<provider>.api_key` in the configuration, then the provider's variables in the
 *   order listed in providers.ts, read from the `env` given (never `process.env` here). Blank is absent.
 * - `unavailable` says why in words fit for `doctor`, naming variables, never a value.
 */
import type { Config } from "../../../config/schema.js";
import { SEARCH_PROVIDERS, type SearchProviderSpec, type WebSearchProviderName } from "./providers.js";

export type WebSearchSettings =
  | {
      available: true;
      name: WebSearchProviderName;
      spec: SearchProviderSpec;
      baseUrl: string;
      /** The key and where it came from (a config key or a variable name). */
      key?: { value: string; source: string };
    }
  | { available: false; name?: WebSearchProviderName; reason: string };

type Env = Readonly<Record<string, string | undefined>>;

export function webSearchKey(
  name: WebSearchProviderName,
  config: Config["web_search"],
  env: Env,
): { value: string; source: string } | undefined {
  const configured = config[name].api_key?.trim();
  if (configured) return { value: configured, source: `web_search.${name}.api_key` };
  for (const variable of SEARCH_PROVIDERS[name].keyEnvs) {
    const value = env[variable]?.trim();
    if (value) return { value, source: variable };
  }
  return undefined;
}

export function webSearchSettingsFrom(config: Config["web_search"], env: Env): WebSearchSettings {
  const name = config.provider;
  if (name === undefined) return { available: false, reason: "no provider configured (web_search.provider)" };
  const spec = SEARCH_PROVIDERS[name];
  const baseUrl = config[name].base_url ?? spec.defaultBaseUrl;
  if (baseUrl === undefined)
    return {
      available: false,
      name,
      reason: `${spec.label} needs its address: set web_search.${name}.base_url`,
    };
  const key = webSearchKey(name, config, env);
  if (spec.keyRequired && key === undefined)
    return {
      available: false,
      name,
      reason: `${spec.label} has no key: set ${spec.keyEnvs.join(" or ")} (or web_search.${name}.api_key)`,
    };
  return { available: true, name, spec, baseUrl, ...(key ? { key } : {}) };
}

/** The key values of every provider that has one, for the process's redactor. */
export function webSearchSecretValues(config: Config["web_search"], env: Env): string[] {
  return (Object.keys(SEARCH_PROVIDERS) as WebSearchProviderName[])
    .map((name) => webSearchKey(name, config, env)?.value)
    .filter((value): value is string => value !== undefined);
}

/** Every variable a provider's key may come from: never passed to a command (child-env.ts). */
export const WEB_SEARCH_KEY_VARIABLES: readonly string[] = Object.values(SEARCH_PROVIDERS).flatMap(
  (spec) => spec.keyEnvs,
);
