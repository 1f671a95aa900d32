/**
 * Issue 32: the dashboard's tool card draws what the tool recorded (`details`), not what its text or its
 * arguments say. The real card component (web/views/items.tsx), bundled by esbuild as the dashboard is, in
 * the system Chromium; the items are what the conversation projection makes of stored events.
 */
import { join } from "node:path";
import { build } from "esbuild";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolDetails } from "../../src/log/tool-details.js";
import type { Item } from "../../web/conversation.js";
import { launchChromium } from "../support/browser.js";

const root = join(import.meta.dirname, "..", "..");

let browser: Browser;
let page: Page;

beforeAll(async () => {
  const bundle = await build({
    stdin: {
      contents: `
        import { h, render } from "preact";
        import { ItemView } from "./web/views/items.tsx";
        const actions = { decide() {}, answer() {}, open() {} };
        window.renderItems = (items) =>
          render(h("div", null, items.map((item) => h(ItemView, { item, actions, key: item.seq }))), document.body);
      `,
      resolveDir: root,
      loader: "tsx",
    },
    bundle: true,
    write: false,
    format: "iife",
    jsx: "automatic",
    jsxImportSource: "preact",
    logLevel: "warning",
  });
  browser = await launchChromium();
  page = await browser.newPage();
  await page.setContent("<!doctype html><html><body></body></html>");
  await page.addScriptTag({ content: bundle.outputFiles[0]!.text });
});

afterAll(async () => {
  await browser?.close();
});

let seq = 0;
function toolItem(
  name: string,
  args: Record<string, unknown>,
  result: { text: string; isError?: boolean; durationMs?: number; details?: ToolDetails },
): Item {
  seq += 1;
  const stored = { ...result, isError: result.isError === true };
  return {
    key: String(seq),
    seq,
    at: "2026-12-06T00:00:00.000Z",
    version: 1,
    kind: "tool",
    tool: {
      callId: `c${seq}`,
      name,
      arguments: JSON.stringify(args),
      state: stored.isError ? "failed" : "done",
      result: stored,
    },
  };
}

async function show(item: Item) {
  await page.evaluate(
    (items) => (globalThis as unknown as { renderItems(i: unknown[]): void }).renderItems(items),
    [item],
  );
  return page.locator(`[data-seq="${item.seq}"]`);
}

describe("issue 32: the dashboard's tool card from details", () => {
  it("bash: the exit code from details fails the card, whatever the text says", async () => {
    const card = await show(
      toolItem(
        "bash",
        { command: "npm test" },
        {
          text: "all good",
          details: { kind: "command", exitCode: 3, truncated: false },
        },
      ),
    );
    expect(await card.getAttribute("data-state")).toBe("failed");
    expect(await card.locator(".tag.error").textContent()).toBe("exit 3");
  });

  it("edit: the recorded hunks, not a diff guessed from the arguments", async () => {
    const details: ToolDetails = {
      kind: "file-change",
      path: "/w/a.ts",
      change: "modified",
      added: 1,
      removed: 1,
      diff: [
        { kind: "@", text: "@@ -1,2 +1,2 @@" },
        { kind: "-", text: "b" },
        { kind: "+", text: "B" },
        { kind: " ", text: "c" },
      ],
      omittedLines: 7,
    };
    const card = await show(
      toolItem(
        "edit",
        { file_path: "a.ts", old_string: "unrelated", new_string: "x" },
        { text: "ok", details },
      ),
    );
    expect(await card.locator(".card-head").textContent()).toContain("edit /w/a.ts");
    expect(await card.locator(".card-head").textContent()).toContain("+1 -1");
    expect(await card.locator(".diff > div").allTextContents()).toEqual([
      "@@ -1,2 +1,2 @@",
      "- b",
      "+ B",
      "  c",
      "… 7 more lines",
    ]);
    expect(await card.locator(".output").count()).toBe(0);
  });

  it("todo_write: the recorded list", async () => {
    const card = await show(
      toolItem(
        "todo_write",
        { todos: [] },
        {
          text: "Updated todo list: 1 pending, 0 in progress, 1 completed.",
          details: {
            kind: "todos",
            items: [
              { content: "plan", status: "completed" },
              { content: "build", status: "pending" },
            ],
          },
        },
      ),
    );
    // Each item's mark is an SVG icon named for screen readers (its <title> is part of the text).
    expect(await card.locator("ul.todos li").allTextContents()).toEqual(["done plan", "to do build"]);
    expect(
      await card
        .locator("ul.todos li svg[role=img]")
        .evaluateAll((svgs) =>
          svgs.map((s) =>
            (s as unknown as { getAttribute(n: string): string | null }).getAttribute("aria-label"),
          ),
        ),
    ).toEqual(["done", "to do"]);
  });

  it("read: the file's line count, and a duration of a second or more", async () => {
    const card = await show(
      toolItem(
        "read",
        { file_path: "p.js" },
        {
          text: "<path>/w/p.js</path>\n…",
          durationMs: 2_500,
          details: { kind: "read", path: "/w/p.js", startLine: 1, endLine: 8, totalLines: 8 },
        },
      ),
    );
    expect(await card.locator(":scope > .muted").first().textContent()).toBe("8 lines");
    expect(await card.locator(".card-head .muted").textContent()).toBe(" 2s");
  });

  it("an old log's result (no details) is its text, with no duration under a second", async () => {
    const card = await show(
      toolItem("edit", { file_path: "a.ts" }, { text: "The file was updated.", durationMs: 40 }),
    );
    expect(await card.getAttribute("data-state")).toBe("ok");
    expect(await card.locator(".output").textContent()).toBe("The file was updated.");
    expect(await card.locator(".diff").count()).toBe(0);
    expect(await card.locator(".card-head .muted").count()).toBe(0);
  });
});
