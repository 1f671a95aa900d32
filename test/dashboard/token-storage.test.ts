/**
 * Issue 30, route 1: a background job read the dashboard's token from Chromium's profile on disk
 * (`Default/Session Storage/*.log`, where `sessionStorage` is persisted) and POSTed `allow-once` for its own
 * call. Now the page trades the token for an HttpOnly, SameSite=Strict session cookie (no expiry, so
 * Chromium keeps it in memory only), and a state change signed in by that cookie must come from the
 * dashboard's own origin.
 *
 * A real Chromium with an on-disk profile, a real server on SQLite, and a second origin on the same site
 * (another localhost port: SameSite does not separate ports) that tries a cross-origin POST.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateServerToken } from "../../src/server/auth.js";
import { bdshPlugin, bdshServerOptions } from "../../src/server/plugin.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import { startScenarioProvider, testConfig, tmpHome } from "../server/harness.js";
import { launchChromiumProfile } from "../support/browser.js";
import { testAgentEnv } from "../support/test-agent.js";

const TOKEN = `token-storage-${"z".repeat(24)}-secret`;

let fake: FakeProvider;
let store: Store;
let app: FastifyInstance;
let serverUrl = "";
/** The headers of every state-changing request the server received (what the browser really sent). */
const seen: IncomingHttpHeaders[] = [];
let profile: string;
let context: BrowserContext | undefined;
let hostile: Server;
let hostileUrl = "";

/**
 * Every file under `dir` whose bytes contain `needle`, as UTF-8 or as UTF-16LE (Chromium's storage keeps
 * strings as UTF-16: the old page's token was found in `Session Storage/000003.log` only that way).
 */
function filesContaining(dir: string, needle: string): string[] {
  const forms = [Buffer.from(needle, "utf8"), Buffer.from(needle, "utf16le")];
  const found: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      let stat: ReturnType<typeof statSync>;
      try {
        stat = statSync(path);
      } catch {
        continue; // a socket or lock Chromium removed meanwhile
      }
      if (stat.isDirectory()) walk(path);
      else if (stat.isFile()) {
        const bytes = readFileSync(path);
        if (forms.some((form) => bytes.includes(form))) found.push(path);
      }
    }
  };
  walk(dir);
  return found;
}

async function signedIn(browser: BrowserContext, dashboard: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${dashboard}/`);
  await page.fill("input[name=token]", TOKEN);
  await page.click("form[data-testid=sign-in] button[type=submit]");
  await page.waitForSelector("[data-testid=session-list]");
  return page;
}

beforeAll(async () => {
  // dist/dashboard is current: the global setup builds when src/ or web/ changed (one build for every file,
  // not one per file racing the others on the same folder).
  const { home, workspace } = tmpHome("bdsh-token-storage-");
  ({ fake } = await startScenarioProvider());
  store = await openStore({ home });
  app = Fastify({ ...bdshServerOptions(), forceCloseConnections: true, logger: false });
  app.addHook("onRequest", async (request) => {
    if (request.method === "POST") seen.push(request.headers);
  });
  await app.register(bdshPlugin, {
    store,
    config: testConfig(fake.url),
    home,
    workspace,
    token: TOKEN,
    env: testAgentEnv(),
    onError: () => undefined,
    owner: generateServerToken(),
  });
  serverUrl = await app.listen({ port: 0, host: "127.0.0.1" });
  profile = mkdtempSync(join(home, "chromium-"));
  // Another origin on the same site: its page posts to the dashboard's server with the browser's cookies.
  hostile = createServer((_request, response) => {
    response.setHeader("content-type", "text/html");
    response.end("<!doctype html><title>elsewhere</title>");
  });
  await new Promise<void>((resolve) => hostile.listen(0, "127.0.0.1", resolve));
  const address = hostile.address();
  hostileUrl = `http://localhost:${typeof address === "object" && address ? address.port : 0}`;
});

afterAll(async () => {
  await context?.close();
  await new Promise<void>((resolve) => hostile?.close(() => resolve()) ?? resolve());
  await app?.close();
  await store?.close();
  await fake?.close();
});

describe("the dashboard's credential in a browser profile (issue 30)", () => {
  it("after sign-in no file under the Chromium profile holds the token or the session cookie", async () => {
    context = await launchChromiumProfile(profile);
    const dashboard = serverUrl.replace("127.0.0.1", "localhost");
    const page = await signedIn(context, dashboard);

    const cookies = await context.cookies(dashboard);
    expect(cookies).toHaveLength(1);
    const [cookie] = cookies;
    expect(cookie).toMatchObject({ name: "bdsh_session", httpOnly: true, sameSite: "Strict", expires: -1 });
    expect(cookie!.value).not.toContain(TOKEN);
    expect(await page.evaluate("document.cookie")).toBe("");
    expect(await page.evaluate("sessionStorage.length + localStorage.length")).toBe(0);

    // The page works on the cookie alone: a reload lists the sessions without asking again.
    await page.reload();
    await page.waitForSelector("[data-testid=session-list]");
    const value = cookie!.value;
    // The control: what the page used to do with the token does reach the disk, and the scan finds it.
    const canary = `canary-${"q".repeat(24)}`;
    await page.evaluate(`sessionStorage.setItem("bdsh.canary", ${JSON.stringify(canary)})`);
    // Closing the browser writes out whatever it keeps; then read the profile as another process would.
    await context.close();
    context = undefined;
    expect(filesContaining(profile, canary).length).toBeGreaterThan(0);
    expect(filesContaining(profile, TOKEN)).toEqual([]);
    expect(filesContaining(profile, value)).toEqual([]);
  });

  it("a POST from another origin on the same site, with the browser's session cookie, is refused (FORBIDDEN_ORIGIN)", async () => {
    context = await launchChromiumProfile(mkdtempSync(join(profile, "..", "chromium-second-")));
    const dashboard = serverUrl.replace("127.0.0.1", "localhost");
    await signedIn(context, dashboard); // the dashboard tab stays open, signed in
    const before = (await store.listSessions({ limit: 100 })).length;

    const other = await context.newPage();
    await other.goto(`${hostileUrl}/`);
    const answered = other.waitForResponse((r) => r.url().startsWith(`${dashboard}/v1/sessions`));
    await other.evaluate(
      ([target]) =>
        fetch(`${target}/v1/sessions`, {
          method: "POST",
          mode: "no-cors",
          credentials: "include",
          headers: { "content-type": "text/plain" },
          body: JSON.stringify({ text: "run the attacker's plan" }),
        }).then(() => undefined),
      [dashboard],
    );
    const response = await answered;
    expect(response.status()).toBe(403); // the body is opaque to the page; FORBIDDEN_ORIGIN is checked below
    // The browser did send the cookie from there (same site): only the Origin check stood in the way.
    const sent = seen.find((h) => h.origin === hostileUrl);
    expect(sent?.cookie).toMatch(/bdsh_session=/);
    expect((await store.listSessions({ limit: 100 })).length).toBe(before);
  });
});
