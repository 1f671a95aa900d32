/**
 * The dashboard with many parallel tool calls in one message (issue 32 acceptance: the page stays
 * responsive, a `page.evaluate` answering within 100 ms): a real server on SQLite with the scripted provider,
 * sessions whose first reply makes 2, 10 and 100 parallel `read` calls, opened in headless Chromium after
 * they end. Measured per session: navigation → the turn's end drawn, then 20 round trips of
 * `page.evaluate` while scrolling the conversation from the bottom to the top (median and max).
 *
 *   npm run build && node --import tsx bench/dashboard/parallel-calls.ts
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { buildDashboard } from "../../scripts/build-dashboard.mjs";
import { openStore } from "../../src/store/open-store.js";
import {
  api,
  startScenarioProvider,
  startServer,
  testConfig,
  tmpHome,
  toolResults,
  turnEnd,
  waitForEvent,
} from "../../test/server/harness.js";
import { launchChromium } from "../../test/support/browser.js";

const TOKEN = "bench-parallel-calls";
await buildDashboard();
const { home } = tmpHome("bdsh-bench-parallel-");
const workspace = mkdtempSync(join("/var/tmp", "bdsh-bench-parallel-ws-"));
writeFileSync(join(workspace, "notes.txt"), "one\ntwo\n");
const { fake, scenario } = await startScenarioProvider();
const store = await openStore({ home });
const server = await startServer({ store, config: testConfig(fake.url), home, workspace, token: TOKEN });
const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
await page.goto(`${server.url}/`);
await page.fill("input[name=token]", TOKEN);
await page.click("form[data-testid=sign-in] button[type=submit]");
await page.waitForSelector("[data-testid=session-list]");

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] as number;
console.log("calls | open → turn end drawn | evaluate round trip p50 / max (20, while scrolling)");
for (const calls of [2, 10, 100]) {
  const marker = scenario(`bench-${calls}`, (_request, messages) =>
    toolResults(messages).length > 0
      ? { text: "done" }
      : {
          toolCalls: Array.from({ length: calls }, (_, i) => ({
            id: `r${i}`,
            name: "read",
            arguments: { file_path: "notes.txt" },
          })),
        },
  );
  const created = await api(server.url, "POST", "/v1/sessions", { text: `${marker} go` }, server.auth);
  const id = String(created.body.id);
  await waitForEvent(store, id, turnEnd);
  const start = performance.now();
  await page.goto(`${server.url}/#/sessions/${encodeURIComponent(id)}`);
  await page.reload();
  await page.waitForSelector("[data-kind=turn-end]");
  const opened = performance.now() - start;
  const trips: number[] = [];
  for (let i = 0; i < 20; i++) {
    await page.evaluate(`document.querySelector("[data-testid=conversation]").scrollTop -= 300`);
    const t = performance.now();
    await page.evaluate("1");
    trips.push(performance.now() - t);
  }
  console.log(
    `${String(calls).padStart(5)} | ${opened.toFixed(0).padStart(6)} ms | ${median(trips).toFixed(1)} / ${Math.max(...trips).toFixed(1)} ms`,
  );
}
await browser.close();
await server.app.close();
await fake.close();
await store.close();
