/**
 * One fresh PostgreSQL database per test run (issue 2: "a fresh database per run"), dropped at the end.
 * Tests read its URL with `inject("databaseUrl")`; the admin URL points at the machine's `test` database.
 */
import pg from "pg";
import type { TestProject } from "vitest/node";
import "vitest";

const ADMIN_URL = process.env.BDSH_TEST_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    adminUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const name = `bdsh_test_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  project.provide("databaseUrl", url.toString());
  project.provide("adminUrl", ADMIN_URL);
  return async () => {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  };
}
