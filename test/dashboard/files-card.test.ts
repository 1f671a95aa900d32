/**
 * T22 `present` cards in Chromium: `FilesCard` (web/views/files-card.tsx) on a page served by a real server,
 * signed in by cookie. The image preview loads through the session's file route, and the download link is
 * an attachment; both carry only the cookie the browser holds.
 */
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { build } from "esbuild";
import type { Browser } from "playwright-core";
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

const TOKEN = "files-card-token";
const SHOTS = process.env.BDSH_SCREENSHOTS;

/** A valid 4×3 red PNG (so the browser decodes it and reports its size). */
function png(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(4, 0);
  header.writeUInt32BE(3, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Buffer.concat(
    Array.from({ length: 3 }, () => Buffer.from([0, ...Array(4).fill([255, 0, 0]).flat()])),
  );
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

let store: Store;
let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;
let server: TestServer;
let browser: Browser;
let workspace: string;

beforeAll(async () => {
  const made = tmpHome("bdsh-files-card-");
  workspace = made.workspace;
  const page = mkdtempSync(join(tmpdir(), "bdsh-files-card-page-"));
  mkdirSync(join(page, "assets"));
  await build({
    entryPoints: [new URL("./fixtures/files-card-page.tsx", import.meta.url).pathname],
    outfile: join(page, "assets", "page.js"),
    bundle: true,
    format: "esm",
    jsx: "automatic",
    jsxImportSource: "preact",
    logLevel: "silent",
  });
  copyFileSync(new URL("../../web/styles.css", import.meta.url).pathname, join(page, "assets", "page.css"));
  writeFileSync(
    join(page, "index.html"),
    '<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="./assets/page.css"><script type="module" src="./assets/page.js"></script></head><body><div id="app"></div></body></html>',
  );
  store = await openStore({ home: made.home });
  ({ fake, scenario } = await startScenarioProvider());
  server = await startServer({
    store,
    config: testConfig(fake.url),
    home: made.home,
    workspace,
    token: TOKEN,
    dashboard: page,
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
  await fake?.close();
  await store?.close();
});

describe("T22 present cards in Chromium", () => {
  it("previews a presented image through the file route and offers the rest as downloads", async () => {
    mkdirSync(join(workspace, "out"), { recursive: true });
    writeFileSync(join(workspace, "out", "chart.png"), png());
    writeFileSync(join(workspace, "out", "data.csv"), "a,b\n1,2\n");
    const marker = scenario("cards", (_request, messages) =>
      toolResults(messages).length > 0
        ? { text: "done" }
        : {
            toolCalls: [
              { id: "p1", name: "present", arguments: { files: ["out/chart.png", "out/data.csv"] } },
            ],
          },
    );
    const created = await api(
      server.url,
      "POST",
      "/v1/sessions",
      { text: `${marker} go` },
      {
        authorization: `Bearer ${TOKEN}`,
      },
    );
    const id = String(created.body.id);
    await waitForEvent(store, id, turnEnd);
    const result = (await store.read(id)).find((e) => e.type === "tool/result" && e.data.callId === "p1");
    const files =
      result?.type === "tool/result" && result.data.details?.kind === "files"
        ? result.data.details.files
        : [];
    expect(files.map((f) => f.path)).toEqual(["out/chart.png", "out/data.csv"]);

    const page = await browser.newPage({ viewport: { width: 800, height: 400 } });
    const hash = new URLSearchParams({ token: TOKEN, session: id, files: JSON.stringify(files) });
    await page.goto(`${server.url}/#${hash}`);
    await page.waitForSelector("[data-testid=file-card] img.file-preview");
    // The preview decoded: the image came through the route with the browser's cookie.
    await page.waitForFunction(
      "(() => { const img = document.querySelector('img.file-preview'); return img?.complete && img.naturalWidth === 4; })()",
    );
    const cards = await page.$$eval("[data-testid=file-card]", (nodes) =>
      nodes.map((node) => ({
        path: node.getAttribute("data-path"),
        text: node.querySelector(".card-head")?.textContent,
        download: node.querySelector("a.file-download")?.getAttribute("download"),
      })),
    );
    expect(cards).toEqual([
      { path: "out/chart.png", text: expect.stringContaining("PNG image"), download: "chart.png" },
      { path: "out/data.csv", text: expect.stringContaining("CSV table"), download: "data.csv" },
    ]);
    const csv = (await page.evaluate(`(async () => {
      const href = document.querySelectorAll("a.file-download")[1].href;
      const response = await fetch(href);
      return {
        status: response.status,
        disposition: response.headers.get("content-disposition"),
        body: await response.text(),
      };
    })()`)) as { status: number; disposition: string | null; body: string };
    expect(csv).toEqual({
      status: 200,
      disposition: expect.stringMatching(/^attachment; filename="data\.csv"/),
      body: "a,b\n1,2\n",
    });
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, "present-cards.png") });
    }
    await page.close();
  });
});
