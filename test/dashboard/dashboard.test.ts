/**
 * Issue 21: the web dashboard in a real browser (playwright-core driving the system Chromium) against real
 * servers on one store, behind a load balancer (a TCP proxy in this file), with the scripted provider.
 *
 * - Sign in, start a session from the list, watch the scripted run stream in, answer the approval in
 *   place, see tool cards and the turn end.
 * - Fail over mid-stream: the balancer drops every connection to server A and sends new ones to B; the
 *   view shows a short reconnect notice and resumes from `Last-Event-ID`, and what it received is exactly
 *   the stored log (every seq once, in order).
 * - The page works under a host app's prefix, and ships what the build made (gzip, CSP, no token needed
 *   for the static files, the Host check still on).
 *
 * `BDSH_SCREENSHOTS=1` also writes the screenshots in docs/ (docs/dashboard-*.png).
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { get } from "node:http";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import {
  type Scenario,
  startScenarioProvider,
  startServer,
  type TestServer,
  testConfig,
  tmpHome,
  toolResults,
} from "../server/harness.js";
import { Balancer, launchChromium } from "../support/browser.js";
import { guard } from "../support/wait.js";

const TOKEN = "dashboard-test-token";
const SHOTS =
  process.env.BDSH_SCREENSHOTS === "1" ? join(import.meta.dirname, "..", "..", "docs") : undefined;

let browser: Browser;
let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;
let storeA: Store;
let storeB: Store;
let serverA: TestServer;
let serverB: TestServer;
let balancer: Balancer;
let home: string;
let workspace: string;

const gate: { release?: () => void; reached?: () => void } = {};

beforeAll(async () => {
  // dist/dashboard is current: the global setup builds when src/ or web/ changed (one build for every file,
  // not one per file racing the others on the same folder).
  ({ home, workspace } = tmpHome("bdsh-dashboard-"));
  ({ fake, scenario } = await startScenarioProvider());
  // The workspace is outside /tmp, which the bash sandbox replaces with a private tmpfs.
  workspace = mkdtempSync(join("/var/tmp", "bdsh-dashboard-ws-"));
  const config = testConfig(fake.url, { lease_ttl_ms: 2_000 });
  // Two servers on one store (one SQLite file, two connections), as two processes would share it.
  storeA = await openStore({ home });
  storeB = await openStore({ home });
  serverA = await startServer({ store: storeA, config, home, workspace, token: TOKEN });
  serverB = await startServer({ store: storeB, config, home, workspace, token: TOKEN });
  balancer = new Balancer(serverA.url);
  await balancer.start();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await balancer?.close();
  await serverA?.app.close();
  await serverB?.app.close();
  await fake?.close();
  await storeA?.close();
  await storeB?.close();
});

async function signedIn(url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(url);
  await page.fill("input[name=token]", TOKEN);
  await page.click("form[data-testid=sign-in] button[type=submit]");
  await page.waitForSelector("[data-testid=session-list]");
  return page;
}

const shot = async (page: Page, name: string) => {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `dashboard-${name}.png`) });
};

describe("the dashboard in Chromium", () => {
  it("starts a session, streams the run, answers an approval in place, and resumes after a fail-over without a duplicate or a gap", async () => {
    // A dangerous command first (asks), then steps of output, the last one held until the fail-over.
    const marker = scenario("dash", async (_request, messages) => {
      const done = toolResults(messages).length;
      if (done === 0)
        return {
          reasoning: "The user wants the old build removed; that needs approval.",
          text: "I will clean the build directory first.",
          toolCalls: [
            { id: "c0", name: "bash", arguments: { command: "rm -rf ./build-old", description: "clean" } },
          ],
        };
      if (done < 4) {
        if (done === 3) {
          gate.reached?.();
          await new Promise<void>((resolve) => {
            gate.release = resolve;
          });
        }
        return {
          text: `Step ${done} output follows.`,
          toolCalls: [
            {
              id: `c${done}`,
              name: "bash",
              arguments: { command: `echo step-${done}`, description: `step ${done}` },
            },
          ],
          frameDelayMs: 5,
        };
      }
      return {
        text: "All done: the build directory is clean and the steps ran.",
        chunkSize: 4,
        frameDelayMs: 10,
      };
    });
    const page = await signedIn(`${balancer.url}/`);
    await shot(page, "sessions-empty");
    await page.fill("textarea[name=prompt]", `${marker} clean the old build`);
    await page.click("[data-testid=create-session]");
    await page.waitForSelector("[data-testid=session-view]");
    const id = await page.getAttribute("[data-testid=session-view]", "data-session-id");
    expect(id).toBeTruthy();

    // The approval is answered in place.
    const allow = page.locator("[data-kind=approval] button[data-decision=allow-once]");
    await allow.waitFor();
    await shot(page, "approval");
    const reached = new Promise<void>((resolve) => {
      gate.reached = resolve;
    });
    await allow.click();
    await page.waitForSelector("[data-kind=approval] [data-testid=approval-answer]");
    await page.waitForSelector("[data-kind=tool][data-tool=bash][data-state=ok]");

    // Mid-run, server A goes away behind the balancer; the view reconnects to B.
    await reached;
    balancer.failOver(serverA.url, serverB.url);
    await page.waitForSelector("[data-testid=reconnect-notice]");
    gate.release?.();
    await page.waitForSelector("[data-testid=connection][data-state=live]");
    await page.waitForSelector("[data-kind=turn-end][data-reason=completed]", { timeout: guard(20_000) });
    await page.waitForFunction("document.body.textContent.includes('All done')");
    await shot(page, "session");

    const stored = (await storeA.read(id!)).map((e) => e.seq);
    await page.waitForFunction(`window.bdshDashboard.seqs().length >= ${stored.length}`);
    const seen = (await page.evaluate("window.bdshDashboard.seqs()")) as number[];
    expect(seen).toEqual(stored);
    expect(new Set(seen).size).toBe(seen.length);
    // The tool cards show their commands and results.
    const cards = await page.locator("[data-kind=tool][data-tool=bash]").count();
    expect(cards).toBeGreaterThanOrEqual(4);

    // Back to the list: the session is there, idle now, found by search.
    await page.click("a.back");
    await page.fill("input[name=search]", id!.slice(0, 12));
    const row = page.locator(`[data-testid=session-row][data-session-id="${id}"]`);
    await row.waitFor();
    expect(await row.getAttribute("data-status")).toBe("idle");
    await shot(page, "sessions");
    await page.close();
  });

  it("asks for the token again when it is wrong, and keeps it nowhere a script can read (issue 30)", async () => {
    const page = await browser.newPage();
    await page.goto(`${serverB.url}/`);
    await page.fill("input[name=token]", "wrong");
    await page.click("form[data-testid=sign-in] button[type=submit]");
    await page.waitForSelector("form[data-testid=sign-in] [role=alert]");
    await page.fill("input[name=token]", TOKEN);
    await page.click("form[data-testid=sign-in] button[type=submit]");
    await page.waitForSelector("[data-testid=session-list]");
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    expect(await page.evaluate("localStorage.length")).toBe(0);
    expect(await page.evaluate("document.cookie")).toBe(""); // HttpOnly
    expect(page.url()).not.toContain(TOKEN);
    // A reload keeps the tab signed in (the session cookie), without asking again.
    await page.reload();
    await page.waitForSelector("[data-testid=session-list]");
    await page.close();
  });
});

describe("serving the page", () => {
  it("works under a host app's prefix: the bare prefix redirects, the page calls the API under it", async () => {
    const prefixed = await startServer({
      store: storeB,
      config: testConfig(fake.url),
      home,
      workspace,
      token: TOKEN,
      prefix: "/agents",
    } as Parameters<typeof startServer>[0]);
    try {
      const bare = await fetch(`${prefixed.url}/agents`, { redirect: "manual" });
      expect(bare.status).toBe(308);
      expect(bare.headers.get("location")).toBe("/agents/");
      const page = await signedIn(`${prefixed.url}/agents`);
      await page.waitForSelector("[data-testid=session-row]");
      expect(new URL(page.url()).pathname).toBe("/agents/");
      await page.close();
    } finally {
      await prefixed.app.close();
    }
  });

  it("serves the built files without a token, gzipped, with a strict CSP; the Host check still applies", async () => {
    const index = await fetch(`${serverA.url}/`, { headers: { "accept-encoding": "gzip" } });
    expect(index.status).toBe(200);
    expect(index.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await index.text();
    const script = /src="\.\/(assets\/app-[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeTruthy();
    const asset = await fetch(`${serverA.url}/${script}`, { headers: { "accept-encoding": "gzip" } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-encoding")).toBe("gzip");
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect((await fetch(`${serverA.url}/assets/..%2fpackage.json`)).status).toBe(404);
    const rebound = await new Promise<number>((resolve, reject) =>
      get(`${serverA.url}/`, { headers: { host: "evil.example" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on("error", reject),
    );
    expect(rebound).toBe(403);
  });
});
