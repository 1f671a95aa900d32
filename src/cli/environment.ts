/**
 * What every command starts from: the home directory, the workspace, the loaded configuration and, when a
 * command needs it, the store. Configuration is loaded before anything else happens, so a bad key exits 2
 * with nothing done.
 */
import { resolve } from "node:path";
import { type ConfigFlags, type LoadedConfig, loadConfig } from "../config/load.js";
import { bdshHome, databaseUrl } from "../config/paths.js";
import { openStore } from "../store/open-store.js";
import type { Store } from "../store/store.js";

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
  const { cwd: _cwd, config: configFile, ...flags } = options;
  const loaded = loadConfig({ home, cwd, env, flags, ...(configFile ? { configFile } : {}) });
  return { env, home, cwd, loaded, databaseUrl: databaseUrl(env) };
}

/** The store the environment names (`DATABASE_URL` or the SQLite file), with the `store.*` settings. */
export function openEnvironmentStore(environment: CliEnvironment): Promise<Store> {
  const { store } = environment.loaded.config;
  return openStore({
    home: environment.home,
    sqliteSynchronous: store.sqlite_synchronous,
    postgresSynchronousCommit: store.postgres_synchronous_commit,
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
