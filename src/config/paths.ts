/**
 * Where state lives: `$BDSH_HOME` (default `~/.bdsh`) holds the embedded database, the user config and
 * plugins. `DATABASE_URL` switches the store to PostgreSQL.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export function bdshHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.BDSH_HOME;
  return home ? resolve(home) : join(homedir(), ".bdsh");
}

export function databaseUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = env.DATABASE_URL;
  return url ? url : undefined;
}
