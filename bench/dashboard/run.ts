/**
 * Issue 21's budget for the dashboard: the first view in under 1 s on loopback, under 300 KB of JavaScript
 * (gzipped), and a session of 10,000 events that scrolls smoothly.
 *
 *   node --import tsx bench/dashboard/run.ts        (BENCH_EVENTS=10000, BENCH_CHROMIUM=/usr/bin/chromium)
 *
 * One server (the plugin on Fastify, SQLite in a tmp home) holding a session of BENCH_EVENTS stored events
 * (a conversation of user messages, replies with reasoning, bash calls and results), the system Chromium
 * headless at 1280×800. Measured:
 * - JavaScript shipped: the gzip bytes the server sends for the page's scripts.
 * - First view: navigation start → the session list drawn (sign-in done beforehand, token in storage),
 *   cold (a new browser context each time), median of 5.
 * - The long session: navigation → every event received and the last one drawn (the feed reads the whole
 *   log through the SSE stream), the DOM size then, and scrolling: 2 s of scrolling from the bottom to the
 *   top, frame intervals from requestAnimationFrame (p50, p95, max; frames over 50 ms).
 * There is no peer to run beside it here (the peers' web views need their own servers and accounts); the
 * ratios printed are against the budget.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import Fastify from "fastify";
import { chromium } from "playwright-core";
import { buildDashboard } from "../../scripts/build-dashboard.mjs";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { NewEvent } from "../../src/log/events.js";
import { bdshPlugin, bdshServerOptions } from "../../src/server/plugin.js";
import { openStore } from "../../src/store/open-store.js";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const CHROMIUM = process.env.BENCH_CHROMIUM ?? "/usr/bin/chromium";
const TOKEN = "bench-dashboard-token";

const { outDir, script } = await buildDashboard();
const home = mkdtempSync(join(tmpdir(), "bdsh-bench-dash-"));
const store = await openStore({ home });
const session = await store.createSession({ title: "a long session" });
let seq = 0;
const batch: NewEvent[] = [];
for (let turn = 1; seq + batch.length < EVENTS; turn++) {
  batch.push({ type: "turn/start", data: {}, turn });
  batch.push({
    type: "user/message",
    data: { text: `Please do step ${turn} of the job.`, source: "human" },
    turn,
  });
  for (let step = 1; step <= 3; step++) {
    const callId = `c${turn}-${step}`;
    batch.push({
      type: "assistant/message",
      data: {
        provider: "bench",
        model: "bench-model",
        finish: "tool-calls",
        blocks: [
          { type: "reasoning", text: `Thinking about step ${turn}.${step}: what to run next and why.` },
          { type: "text", text: `Running part ${step} of step ${turn}.` },
          {
            type: "tool-call",
            id: callId,
            name: "bash",
            arguments: JSON.stringify({ command: `ls -la src/${step}` }),
          },
        ],
      },
      turn,
      step,
    });
    batch.push({
      type: "tool/call",
      data: { callId, name: "bash", arguments: `{"command":"ls -la src/${step}"}` },
      turn,
      step,
    });
    batch.push({
      type: "tool/result",
      data: {
        callId,
        name: "bash",
        text: Array.from({ length: 1 + (step % 3) * 4 }, (_, i) => `line ${i}`).join("\n"),
      },
      turn,
      step,
    });
  }
  batch.push({ type: "turn/end", data: { reason: "completed" }, turn });
  if (batch.length > 500) {
    const written = await store.append(session.id, batch.splice(0), seq);
    seq = written.at(-1)!.seq;
  }
}
if (batch.length) seq = (await store.append(session.id, batch.splice(0), seq)).at(-1)!.seq;

const app = Fastify({ ...bdshServerOptions(), logger: false });
await app.register(bdshPlugin, {
  store,
  config: DEFAULT_CONFIG,
  workspace: home,
  home,
  token: TOKEN,
  env: { PATH: process.env.PATH },
  dashboard: outDir,
});
const url = await app.listen({ port: 0, host: "127.0.0.1" });
const scriptBody = new Uint8Array(
  (await (await fetch(`${url}/assets/${script}`)).arrayBuffer()) as ArrayBuffer,
);
const scriptBytes = scriptBody.byteLength;
const gzipBytes = gzipSync(scriptBody, { level: 9 }).length; // what the server sends with gzip

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"], headless: true });
const firstViews: number[] = [];
for (let i = 0; i < 5; i++) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript(`sessionStorage.setItem("bdsh.token", ${JSON.stringify(TOKEN)})`);
  const page = await context.newPage();
  await page.goto(`${url}/`);
  await page.waitForSelector("[data-testid=session-row]");
  firstViews.push(Number(await page.evaluate("performance.now()")));
  await context.close();
}

const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
await context.addInitScript(`sessionStorage.setItem("bdsh.token", ${JSON.stringify(TOKEN)})`);
const page = await context.newPage();
await page.goto(`${url}/#/sessions/${session.id}`);
await page.waitForFunction(`(window.bdshDashboard?.seqs().length ?? 0) >= ${seq}`, undefined, {
  timeout: 120_000,
});
await page.waitForSelector(`[data-seq="${seq}"]`);
const loaded = Number(await page.evaluate("performance.now()"));
const domNodes = Number(await page.evaluate("document.getElementsByTagName('*').length"));
const rows = Number(await page.evaluate("document.querySelectorAll('.vrow').length"));
const frames = (await page.evaluate(`new Promise((resolve) => {
  const list = document.querySelector('.vlist');
  const start = performance.now();
  const from = list.scrollTop;
  const intervals = [];
  let last = start;
  const step = (now) => {
    intervals.push(now - last);
    last = now;
    const t = Math.min(1, (now - start) / 2000);
    list.scrollTop = from * (1 - t);
    if (t < 1) requestAnimationFrame(step); else resolve(intervals.slice(1));
  };
  requestAnimationFrame(step);
})`)) as number[];
await browser.close();
await app.close();
await store.close();

const sorted = [...frames].sort((a, b) => a - b);
const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
const median = [...firstViews].sort((a, b) => a - b)[2]!;
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
console.log(`events in the session:      ${seq}`);
console.log(
  `JavaScript:                 ${kb(scriptBytes)} raw, ${kb(gzipBytes)} gzipped (budget 300 KB: ${(gzipBytes / (300 * 1024)).toFixed(3)}×)`,
);
console.log(
  `first view (median of 5):   ${median.toFixed(0)} ms (budget 1,000 ms: ${(median / 1000).toFixed(2)}×); all: ${firstViews.map((v) => v.toFixed(0)).join(", ")}`,
);
console.log(`long session loaded:        ${loaded.toFixed(0)} ms to receive and draw ${seq} events`);
console.log(`DOM after load:             ${domNodes} elements, ${rows} rows drawn of ${seq} events`);
console.log(
  `scrolling 2 s to the top:   ${frames.length} frames, p50 ${pct(0.5).toFixed(1)} ms, p95 ${pct(0.95).toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms, ${frames.filter((f) => f > 50).length} over 50 ms`,
);
