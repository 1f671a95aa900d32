/**
 * What every command starts from: the home directory, the workspace, the loaded configuration and, when a
 * command needs it, the store. Configuration is loaded before anything else happens, so a bad key exits 2
 * with nothing done.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { type ConfigFlags, type LoadedConfig, loadConfig } from "../config/load.js";
import { bdshHome, databaseUrl } from "../config/paths.js";
import { openStore } from "../store/open-store.js";
import type { Store } from "../store/store.js";
import { bubblewrapAvailable } from "../tools/terminal/bubblewrap.js";
import { usageError } from "./errors.js";
import type { Output } from "./output.js";

export type CliEnvironment = {
  env: NodeJS.ProcessEnv;
  home: string;
  cwd: string;
  loaded: LoadedConfig;
  databaseUrl: string | undefined;
};

export type GlobalOptions = { cwd?: string; config?: string } & ConfigFlags;

export function cliEnvironment(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): CliEnvironment {
  const home = bdshHome(env);
  const cwd = resolve(options.cwd ?? process.cwd());
  // A workspace that does not exist is a usage error, before anything is sent.
  if (options.cwd !== undefined && !isDirectory(cwd))
    throw usageError(`--cwd ${options.cwd}: no such directory`);
  // Commander names `--base-url` `baseUrl`; the loader's flag table says `base-url` (it was ignored).
  const {
    cwd: _cwd,
    config: configFile,
    baseUrl,
    sandboxNetwork,
    ...rest
  } = options as GlobalOptions & { baseUrl?: string; sandboxNetwork?: string };
  const flags: ConfigFlags = {
    ...rest,
    ...(baseUrl === undefined ? {} : { "base-url": baseUrl }),
    ...(sandboxNetwork === undefined ? {} : { "sandbox-network": sandboxNetwork }),
  };
  const loaded = loadConfig({ home, cwd, env, flags, ...(configFile ? { configFile } : {}) });
  return { env, home, cwd, loaded, databaseUrl: databaseUrl(env) };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The warnings a command that runs an agent prints before it starts, each `bdsh: warning: …` on stderr: an
 * untrusted project, a project key that was ignored, and commands running without an OS sandbox.
 */
export function printStartupWarnings(environment: CliEnvironment, output: Output): void {
  for (const warning of environment.loaded.warnings) output.err(`bdsh: warning: ${warning}`);
  if (!bubblewrapAvailable()) {
    output.err(
      `bdsh: warning: ${environment.loaded.config.sandbox_required ? "commands will be refused" : "commands run WITHOUT an OS sandbox"}: bubblewrap (bwrap) is not available (${BUBBLEWRAP_INSTALL}; \`bdsh doctor\` checks it)`,
    );
  }
}

/** How to get bubblewrap (doctor and the startup warning). */
export const BUBBLEWRAP_INSTALL =
  "install it with `apt-get install bubblewrap`, `dnf install bubblewrap` or `pacman -S bubblewrap`";

/** The store the environment names (`DATABASE_URL` or the SQLite file), with the `store.*` settings. */
export function openEnvironmentStore(environment: CliEnvironment): Promise<Store> {
  const { store } = environment.loaded.config;
  return openStore({
    home: environment.home,
    sqliteSynchronous: store.sqlite_synchronous,
    postgresSynchronousCommit: store.postgres_synchronous_commit,
    postgresPoolSize: store.postgres_pool_size,
    ...(environment.databaseUrl ? { databaseUrl: environment.databaseUrl } : {}),
  });
}

export async function withStore<T>(
  environment: CliEnvironment,
  use: (store: Store) => Promise<T>,
): Promise<T> {
  const store = await openEnvironmentStore(environment);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}
