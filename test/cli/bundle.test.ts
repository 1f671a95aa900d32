/**
 * The built `bdsh` is one bundle (scripts/build-cli.mjs): what the bundle inlines is never loaded again from
 * `node_modules`, a process loads the driver of the store it opens and not the other's, and code that finds
 * the package's own files (the version, the dashboard) finds them from the bundle's chunks, which sit at a
 * different depth than the modules tsc writes; on Node 22 and later the binary keeps Node's compile cache in
 * its home, privately. The first cases run the built CLI with a loader hook that records every module the
 * process loads. Every case has a home of its own, never the real `~/.bdsh`.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import module from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script without types; only its list of package names is read.
import { INLINED_PACKAGES } from "../../scripts/build-cli.mjs";
import { compileCacheDir } from "../../src/cli/compile-cache.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { startServe } from "../chaos/serve-process.js";
import { testDatabaseUrl } from "../support/database.js";
import { BDSH_MAIN, type CliResult, runCli, runNode } from "../support/run-cli.js";

const RECORD_LOADS = new URL("./fixtures/record-loads.mjs", import.meta.url).href;

type Loaded = CliResult & { modules: string[] };

/** Runs the built CLI with the load recorder; the modules it loaded, in order. */
async function bdshRecordingLoads(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Loaded> {
  const record = join(mkdtempSync(join(tmpdir(), "bdsh-loads-")), "modules.txt");
  writeFileSync(record, "");
  const result = await runNode(
    ["--import", RECORD_LOADS, BDSH_MAIN, ...args],
    {
      ...env,
      BDSH_TEST_RECORD_LOADS: record,
    },
    cwd,
  );
  return { ...result, modules: readFileSync(record, "utf8").split("\n").filter(Boolean) };
}

/** The npm packages among the loaded modules, by name. */
function packagesLoaded(modules: string[]): Set<string> {
  const names = modules.flatMap((url) => {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    return match?.[1] ? [match[1]] : [];
  });
  return new Set(names);
}

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider({ script: () => ({ text: "done" }) });
});
afterAll(async () => {
  await fake.close();
});

function runEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    BDSH_HOME: mkdtempSync(join(tmpdir(), "bdsh-bundle-home-")),
    BDSH_BASE_URL: fake.url,
    DEEPSEEK_API_KEY: "sk-test-bundle",
    ...extra,
  };
}

describe("the bundled bdsh", () => {
  it("prints the package's version, found from the bundle", async () => {
    const packageJson = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    const home = mkdtempSync(join(tmpdir(), "bdsh-bundle-home-"));
    const result = await bdshRecordingLoads(["--version"], { BDSH_HOME: home }, tmpdir());
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(packageJson.version);
    expect(result.modules.some((url) => url.includes("/dist/cli/chunks/"))).toBe(true);
  });

  it("runs a turn on SQLite loading neither the inlined packages nor the PostgreSQL driver", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "bdsh-bundle-ws-"));
    const result = await bdshRecordingLoads(["run", "--json", "hello"], runEnv(), workspace);
    expect(result.stderr).not.toMatch(/Error/);
    expect(result.code).toBe(0);
    const loaded = packagesLoaded(result.modules);
    expect(loaded.has("better-sqlite3")).toBe(true);
    expect(loaded.has("pg")).toBe(false);
    for (const name of INLINED_PACKAGES as string[]) expect(loaded.has(name)).toBe(false);
  });

  it("runs a turn on PostgreSQL without loading the SQLite driver", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "bdsh-bundle-ws-"));
    const env = runEnv({ DATABASE_URL: testDatabaseUrl() });
    const result = await bdshRecordingLoads(["run", "--json", "hello"], env, workspace);
    expect(result.code).toBe(0);
    const loaded = packagesLoaded(result.modules);
    expect(loaded.has("pg")).toBe(true);
    expect(loaded.has("better-sqlite3")).toBe(false);
  });

  it("serves the dashboard page from the bundle", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-bundle-home-"));
    const configFile = join(home, "config.yaml");
    writeFileSync(configFile, "");
    const served = await startServe({
      fakeUrl: fake.url,
      home,
      workspace: mkdtempSync(join(tmpdir(), "bdsh-bundle-ws-")),
      configFile,
    });
    try {
      const page = await fetch(`${served.url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<title>better-dsh</title>");
    } finally {
      served.child.kill("SIGTERM");
      await served.exited;
    }
  });

  it("keeps Node's compile cache in an existing home, private, and never creates a missing home", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-bundle-home-"));
    const first = await runCli(["--version"], { BDSH_HOME: home }, tmpdir());
    expect(first.code).toBe(0);
    const cache = compileCacheDir(home);
    if (typeof (module as { enableCompileCache?: unknown }).enableCompileCache === "function") {
      // Node 22 and later: the cache was written, inside the home, readable by its owner only.
      expect(statSync(cache).mode & 0o777).toBe(0o700);
      expect(readdirSync(cache).length).toBeGreaterThan(0);
      const again = await runCli(["--version"], { BDSH_HOME: home }, tmpdir());
      expect(again.stdout).toBe(first.stdout);
    } else {
      expect(existsSync(cache)).toBe(false);
    }
    const missing = join(home, "not-yet");
    expect((await runCli(["--version"], { BDSH_HOME: missing }, tmpdir())).code).toBe(0);
    expect(existsSync(missing)).toBe(false);
  });
});
