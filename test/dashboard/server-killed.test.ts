/**
 * Issue 21 acceptance: kill the server mid-stream and see the view resume on another server with no
 * duplicate or missing event. Two real `bdsh serve` processes on one PostgreSQL database (a database of
 * its own), one token, a load balancer in front, the dashboard in Chromium. The browser's stream is put on
 * the server driving the turn; that server is SIGKILLed while a slow command runs and the balancer sends
 * the reconnect to the survivor, which closes the orphaned turn (issue 16 item 1). The page shows a
 * reconnect notice, then the honest end (`interrupted`), and holds exactly the stored events.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { type ServeProcess, startServe, writeServeConfig } from "../chaos/serve-process.js";
import { Balancer, launchChromium } from "../support/browser.js";
import { type FreshDatabase, freshPostgresDatabase } from "../support/fresh-database.js";
import { guard } from "../support/wait.js";

const TOKEN = "dashboard-kill-test-token";
const LEASE_TTL_MS = 1_500;

let database: FreshDatabase;
let dir: string;
let fake: FakeProvider;
let store: Store;
let browser: Browser;
let balancer: Balancer;
const servers: ServeProcess[] = [];

beforeAll(async () => {
  // dist/dashboard is current: the global setup builds when src/ or web/ changed (one build for every file,
  // not one per file racing the others on the same folder).
  database = await freshPostgresDatabase("dashkill");
  dir = mkdtempSync(join(tmpdir(), "bdsh-dashkill-"));
  mkdirSync(join(dir, "ws"));
  mkdirSync(join(dir, "home"));
  fake = await startFakeProvider({
    script: (request) => {
      const messages = ((request.body?.messages ?? []) as Array<{ role: string }>).filter(
        (m) => m.role === "tool",
      );
      if (messages.length === 0)
        return {
          text: "Starting the long job now.",
          toolCalls: [
            {
              id: "slow1",
              name: "bash",
              arguments: { command: "sleep 30 && echo finished", description: "slow" },
            },
          ],
        };
      return { text: "should never be asked" };
    },
  });
  store = await openStore({ home: join(dir, "home"), databaseUrl: database.url });
  const configFile = join(dir, "config.yaml");
  writeServeConfig(configFile, {
    lease_ttl_ms: LEASE_TTL_MS,
    sweep_interval_ms: 20_000,
    shutdown_grace_ms: 0,
  });
  const env = {
    databaseUrl: database.url,
    fakeUrl: fake.url,
    home: join(dir, "home"),
    workspace: join(dir, "ws"),
    configFile,
    token: TOKEN,
  };
  servers.push(...(await Promise.all([startServe(env), startServe(env)])));
  balancer = new Balancer(servers[0]!.url);
  await balancer.start();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await balancer?.close();
  for (const s of servers) s.child.kill("SIGKILL");
  await Promise.all(servers.map((s) => s.exited));
  await store?.close();
  await fake?.close();
  await database?.drop();
});

describe("the dashboard when the server driving a turn dies", () => {
  it("resumes on the other server with no duplicate or missing event, and shows the honest end", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${balancer.url}/`);
    await page.fill("input[name=token]", TOKEN);
    await page.click("form[data-testid=sign-in] button[type=submit]");
    await page.fill("textarea[name=prompt]", "run the long job");
    await page.click("[data-testid=create-session]");
    await page.waitForSelector("[data-kind=tool][data-tool=bash][data-state=running]", {
      timeout: guard(20_000),
    });
    const id = (await page.getAttribute("[data-testid=session-view]", "data-session-id"))!;

    // Put the browser's stream on the server that drives the turn.
    const lease = await store.getLease(sessionLeaseName(id));
    const driver = servers.find((s) => lease?.owner.split(":")[1] === String(s.child.pid))!;
    const survivor = servers.find((s) => s !== driver)!;
    expect(driver).toBeDefined();
    if (balancer.target !== driver.url) {
      balancer.failOver(balancer.target, driver.url);
      await page.waitForSelector("[data-testid=reconnect-notice]");
      await page.waitForSelector("[data-testid=connection][data-state=live]");
    }

    driver.child.kill("SIGKILL");
    balancer.failOver(driver.url, survivor.url);
    await driver.exited;
    await page.waitForSelector("[data-testid=reconnect-notice]");
    await page.waitForSelector("[data-kind=turn-end][data-reason=interrupted]", { timeout: guard(20_000) });
    await page.waitForSelector("[data-kind=tool][data-tool=bash][data-state=failed]");

    const stored = (await store.read(id)).map((e: LogEvent) => e.seq);
    await page.waitForFunction(`window.bdshDashboard.seqs().length >= ${stored.length}`);
    const seen = (await page.evaluate("window.bdshDashboard.seqs()")) as number[];
    expect(seen).toEqual(stored);
    expect(survivor.child.exitCode).toBeNull();
    await page.close();
  });
});
