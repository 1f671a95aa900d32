/**
 * Before any test file: fresh PostgreSQL databases for this run ("a fresh database per run"), one per test
 * worker, dropped at the end, and a current build in `dist/`. Tests take their worker's database from
 * `testDatabaseUrl()` (support/database.ts); the admin URL points at the machine's `test` database.
 *
 * The tests start `bdsh` from `dist/cli/main.js`, as a user's machine does, not from the sources through a
 * TypeScript loader (which costs about three times the CPU per process and made a loaded machine time
 * out). `npm test` builds first; a direct `vitest` run after a source change rebuilds here, so no test ever
 * runs an older CLI than the sources it sits next to.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { TestProject } from "vitest/node";
import "vitest";
import { buildIsCurrent } from "./build-age.js";
import { buildFixtures } from "./fixture-build.js";
import { TEST_WORKERS } from "./workers.js";

const ADMIN_URL = process.env.BDSH_TEST_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

declare module "vitest" {
  export interface ProvidedContext {
    /** One per test worker (support/database.ts picks this worker's). */
    databaseUrls: string[];
    adminUrl: string;
    /** Fixture source path → its compiled form (support/fixture-build.ts). */
    compiledFixtures: Record<string, string>;
  }
}

/** Builds when `dist/` is missing or older than a file under `src/` or `web/`. */
function ensureCurrentBuild(): void {
  if (buildIsCurrent(ROOT)) return;
  execFileSync("npm", ["run", "build"], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureCurrentBuild();
  // Inside the checkout, so the compiled fixtures' package imports resolve from its node_modules.
  const cache = join(ROOT, "node_modules", ".cache");
  mkdirSync(cache, { recursive: true });
  const fixtureDir = mkdtempSync(join(cache, "bdsh-fixtures-"));
  project.provide("compiledFixtures", await buildFixtures(ROOT, fixtureDir));
  const run = `bdsh_test_${process.pid}_${Date.now().toString(36)}`;
  const names = Array.from({ length: TEST_WORKERS }, (_, i) => `${run}_w${i + 1}`);
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  for (const name of names) await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  project.provide(
    "databaseUrls",
    names.map((name) => {
      const url = new URL(ADMIN_URL);
      url.pathname = `/${name}`;
      return url.toString();
    }),
  );
  project.provide("adminUrl", ADMIN_URL);
  return async () => {
    rmSync(fixtureDir, { recursive: true, force: true });
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    for (const name of names) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  };
}
