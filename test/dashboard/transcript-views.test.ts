/**
 * The dashboard renders the shared transcript (src/transcript/) in Chromium: a message with many parallel
 * tool calls opens and stays responsive (each card has its own key), a subagent's card reaches its final
 * state from the parent's log, and a reload mid-stream shows the whole partial reply.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import {
  api,
  type Scenario,
  startScenarioProvider,
  startServer,
  type TestServer,
  testConfig,
  tmpHome,
  toolResults,
  turnEnd,
  waitForEvent,
} from "../server/harness.js";
import { launchChromium } from "../support/browser.js";
import { guard } from "../support/wait.js";

const TOKEN = "transcript-views-token";

let browser: Browser;
let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;
let store: Store;
let server: TestServer;

beforeAll(async () => {
  // dist/dashboard is current: the global setup builds when src/ or web/ changed (one build for every file,
  // not one per file racing the others on the same folder).
  const { home } = tmpHome("bdsh-transcript-views-");
  const workspace = mkdtempSync(join("/var/tmp", "bdsh-transcript-ws-"));
  writeFileSync(join(workspace, "notes.txt"), "one\ntwo\nthree\n");
  ({ fake, scenario } = await startScenarioProvider());
  store = await openStore({ home });
  server = await startServer({ store, config: testConfig(fake.url), home, workspace, token: TOKEN });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
  await fake?.close();
  await store?.close();
});

async function signedIn(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${server.url}/`);
  await page.fill("input[name=token]", TOKEN);
  await page.click("form[data-testid=sign-in] button[type=submit]");
  await page.waitForSelector("[data-testid=session-list]");
  return page;
}

async function createSession(text: string): Promise<string> {
  const created = await api(server.url, "POST", "/v1/sessions", { text }, server.auth);
  expect(created.status).toBe(201);
  return String(created.body.id);
}

/** The page's document in predicates that run in the browser (inline: they are sent as source text). */
type PageDocument = { querySelector(selector: string): { textContent: string | null } | null };

/** The page still runs script: a round trip through `page.evaluate` (a frozen tab never answers). */
async function responsive(page: Page): Promise<void> {
  expect(await page.evaluate("1 + 1")).toBe(2);
}

describe("the dashboard on the shared transcript", () => {
  it.each([2, 10, 100])("opens a message with %i parallel tool calls and stays responsive", async (calls) => {
    const marker = scenario(`parallel-${calls}`, (_request, messages) => {
      if (toolResults(messages).length > 0) return { text: `Read all ${calls}.` };
      return {
        text: `Reading ${calls} times.`,
        toolCalls: Array.from({ length: calls }, (_, i) => ({
          id: `r${i}`,
          name: "read",
          arguments: { file_path: "notes.txt" },
        })),
      };
    });
    const id = await createSession(`${marker} read the notes`);
    await waitForEvent(store, id, turnEnd);
    const page = await signedIn();
    // Opened from the list, as a person would.
    await page.fill("input[name=search]", id.slice(0, 12));
    await page.click(`[data-testid=session-row][data-session-id="${id}"] a`);
    await page.waitForSelector("[data-kind=turn-end][data-reason=completed]", { timeout: guard(20_000) });
    await responsive(page);
    const keys = (await page.$$eval("[data-key]", (rows) =>
      rows.map((r) => r.getAttribute("data-key")),
    )) as string[];
    expect(new Set(keys).size).toBe(keys.length);
    // Scroll through every card: each is drawn once, with its result.
    const seen = new Set<string>();
    for (let guardLoops = 0; guardLoops < 200 && seen.size < calls; guardLoops++) {
      for (const key of await page.$$eval("[data-kind=tool][data-state=ok]", (cards) =>
        cards.map((c) => c.closest("[data-key]")?.getAttribute("data-key") ?? ""),
      ))
        seen.add(key);
      await page.evaluate(`document.querySelector("[data-testid=conversation]").scrollTop -= 400`);
      // Wait for the page to draw that position: a scroll event comes with the next frame, and on a loaded
      // machine several 400 px steps sent before it would arrive as one jump past rows never drawn.
      await page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))");
      await responsive(page);
    }
    expect(seen.size).toBe(calls);
    await page.close();
  });

  it("brings a subagent's card to its final state from the parent's log", async () => {
    const child = scenario("child-task", () => ({ text: "The child looked and found three lines." }));
    const parent = scenario("parent-delegates", (_request, messages) => {
      const settled = messages.some(
        (m) => m.role === "user" && JSON.stringify(m.content ?? "").includes("found three lines"),
      );
      if (settled) return { text: "The child reported back." };
      if (toolResults(messages).length > 0) return { text: "Waiting for the child." };
      return { toolCalls: [{ id: "s1", name: "subagent", arguments: { task: `${child} count the lines` } }] };
    });
    const page = await signedIn();
    const id = await createSession(`${parent} delegate it`);
    await page.goto(`${server.url}/#/sessions/${encodeURIComponent(id)}`);
    const card = page.locator("[data-kind=subagent] [data-testid=child-state]");
    await card.waitFor({ timeout: guard(20_000) });
    await page.waitForSelector("[data-kind=subagent] [data-testid=child-state][data-state=completed]", {
      timeout: guard(30_000),
    });
    await responsive(page);
    await page.close();
  });

  it("shows the whole partial reply after a reload mid-stream", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reply = "Alpha bravo charlie delta echo foxtrot golf hotel india juliet.";
    const marker = scenario("held-stream", () => ({
      text: reply,
      chunkSize: 6,
      // OpenAI frames: a role frame, then one per chunk; hold after four chunks of text.
      fault: { kind: "hold", afterFrames: 5, until: held },
    }));
    const page = await signedIn();
    const id = await createSession(`${marker} say it slowly`);
    await page.goto(`${server.url}/#/sessions/${encodeURIComponent(id)}`);
    await page.waitForFunction(
      () =>
        (globalThis as unknown as { document: PageDocument }).document
          .querySelector("[data-testid=streaming]")
          ?.textContent?.includes("Alpha bravo") === true,
      undefined,
      { timeout: guard(20_000) },
    );
    await page.reload();
    await page.waitForSelector("[data-testid=streaming]", { timeout: guard(20_000) });
    const partial = (await page.textContent("[data-testid=streaming]")) ?? "";
    expect(partial.startsWith("Alpha bravo")).toBe(true);
    release();
    await page.waitForFunction(
      (text) =>
        (globalThis as unknown as { document: PageDocument }).document
          .querySelector("[data-kind=assistant]")
          ?.textContent?.includes(text) === true,
      reply,
      { timeout: guard(20_000) },
    );
    expect(await page.locator("[data-testid=streaming]").count()).toBe(0);
    await page.close();
  });
});
