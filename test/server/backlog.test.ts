/**
 * `server.backlog`: the listen backlog `bdsh serve` passes to `listen`. Node's default (511) overflows when a
 * thousand clients connect at once and the kernel drops the attempts past it, so the key defaults to 4096.
 * The value is read back from the kernel: for a listening TCP socket `ss` reports the backlog as its Send-Q
 * (Linux caps it at net.core.somaxconn, so the test's value stays below that).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load.js";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { startFakeProvider } from "../../testing/fake-provider/index.js";
import { startServe } from "../chaos/serve-process.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

function tmpDirs() {
  const root = mkdtempSync(join(tmpdir(), "bdsh-backlog-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  mkdirSync(home);
  mkdirSync(workspace);
  return { root, home, workspace };
}

/** The backlog of the TCP socket listening on `port` (Send-Q of a LISTEN row of `ss -ltn`). */
function listenBacklog(port: number): number {
  const out = execFileSync("ss", ["-ltnH", `sport = :${port}`], { encoding: "utf8" });
  const row = out.split("\n").find((line) => line.startsWith("LISTEN"));
  if (!row) throw new Error(`no listening socket on port ${port}: ${out}`);
  return Number(row.trim().split(/\s+/)[2]);
}

describe("server.backlog", () => {
  it("defaults to 4096 and rejects a value that is not a positive integer, naming the key and the file", () => {
    expect(DEFAULT_CONFIG.server.backlog).toBe(4096);
    const { home, workspace } = tmpDirs();
    for (const bad of ["0", "-5", "12.5", "lots"]) {
      writeFileSync(join(home, "config.yaml"), `server:\n  backlog: ${bad}\n`);
      let error: unknown;
      try {
        loadConfig({ home, cwd: workspace, env: {} });
      } catch (caught) {
        error = caught;
      }
      expect(error, bad).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).key).toBe("server.backlog");
      expect((error as ConfigError).source).toBe(join(home, "config.yaml"));
    }
  });

  it("reaches listen: the kernel reports the configured backlog on bdsh serve's socket", async () => {
    const somaxconn = Number(readFileSync("/proc/sys/net/core/somaxconn", "utf8"));
    const backlog = Math.min(77, somaxconn); // 77: not Node's 511 nor the default 4096, below any cap
    const fake = await startFakeProvider({ script: () => ({ text: "unused" }) });
    cleanups.push(() => fake.close());
    const { root, home, workspace } = tmpDirs();
    const configFile = join(root, "config.yaml");
    writeFileSync(configFile, `server:\n  backlog: ${backlog}\n  shutdown_grace_ms: 0\n`);
    const server = await startServe({ fakeUrl: fake.url, home, workspace, configFile });
    cleanups.push(async () => {
      server.child.kill("SIGKILL");
      await server.exited;
    });
    expect(listenBacklog(Number(new URL(server.url).port))).toBe(backlog);
  });
});
