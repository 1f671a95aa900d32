/**
 * A PostgreSQL database of the calling test file's own, on the test server (`inject("adminUrl")`), dropped
 * by `drop()`: for tests whose servers repair or claim whatever they see, so other files' sessions must stay
 * out of reach.
 */
import pg from "pg";
import { inject } from "vitest";

export type FreshDatabase = { url: string; drop: () => Promise<void> };

async function admin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function freshPostgresDatabase(prefix: string): Promise<FreshDatabase> {
  const adminUrl = inject("adminUrl");
  const name = `bdsh_${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
