import { EventEmitter } from "node:events";
import { createElement } from "react";
import { describe, expect, it, vi } from "vitest";
import { ChatScreen } from "../../../src/cli/chat/chat-screen.js";
import { editorOf } from "../../../src/cli/chat/editor.js";
import { withTuiEnvironment } from "../../../src/cli/chat/load-tui.js";
import { PLAIN } from "../../../src/cli/render/style.js";
import { guard, waitUntil } from "../../support/wait.js";

// Ink is loaded as `bdsh chat` loads it (load-tui.ts), and with `CI` set as in a CI job: Ink decides at
// load whether it runs under CI and then draws no live region until exit, which blanked the editor.
const ciBefore = process.env.CI;
process.env.CI = "true";
const { inkRender, render, ChatApp } = await withTuiEnvironment(async () => ({
  inkRender: (await import("ink")).render,
  render: (await import("ink-testing-library")).render,
  ChatApp: (await import("../../../src/cli/chat/chat-app.js")).ChatApp,
}));
if (ciBefore === undefined) delete process.env.CI;
else process.env.CI = ciBefore;

const tick = (ms = 80) => new Promise((r) => setTimeout(r, ms));

/** A terminal as Ink sees a real one (not ink-testing-library's debug mode): bytes in order. */
class Term extends EventEmitter {
  readonly isTTY = true;
  readonly columns = 80;
  output = "";
  constructor(readonly rows: number) {
    super();
  }
  write(text: string): boolean {
    this.output += text;
    return true;
  }
}

function mount(screen: ChatScreen, rows = 24) {
  const term = new Term(rows);
  const ink = inkRender(createElement(ChatApp, { screen, p: PLAIN, hint: "hint line" }), {
    stdout: term as unknown as NodeJS.WriteStream,
    stdin: new EventEmitter() as unknown as NodeJS.ReadStream,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  return { term, ink };
}

const count = (text: string, part: string) => text.split(part).length - 1;

describe("chat app (Ink view of the chat screen)", () => {
  it("draws committed lines, the editor and later changes", async () => {
    const screen = new ChatScreen(PLAIN, 80, () => undefined);
    screen.note("session abc");
    const app = render(createElement(ChatApp, { screen, p: PLAIN, hint: "hint line" }));
    await waitUntil(() => app.frames.join("\n").includes("session abc"), "the committed line drawn");
    screen.setEditor(editorOf("hello"));
    await waitUntil(() => app.lastFrame()?.includes("› hello"), "the editor drawn");
    app.unmount();
  });

  it("prints each transcript line once, in order, above the live region", async () => {
    const screen = new ChatScreen(PLAIN, 80, () => undefined);
    screen.note("first line");
    const { term, ink } = mount(screen);
    await waitUntil(() => term.output.includes("first line"), "the first line drawn");
    screen.userMessage("second line", false);
    screen.turnStarted();
    for (const d of ["third ", "line\nfourth", " line\n"]) {
      screen.delta("text", d);
      await tick(20);
    }
    await vi.waitFor(() => expect(term.output).toContain("fourth line"), {
      timeout: guard(10_000),
      interval: 50,
    });
    await tick(300);
    ink.unmount();
    const lines = ["first line", "second line", "third line", "fourth line"];
    for (const line of lines) expect(count(term.output, line)).toBe(1);
    const at = lines.map((line) => term.output.indexOf(line));
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it("keeps the live region shorter than the terminal when the unfinished line is long", async () => {
    const screen = new ChatScreen(PLAIN, 80, () => undefined);
    const { term, ink } = mount(screen, 24);
    screen.turnStarted();
    const words = Array.from({ length: 2000 }, (_, i) => `w${i}`);
    screen.delta("text", words.join(" "));
    // Repaints run on a clock; on a loaded machine the first frame may come late.
    await vi.waitFor(() => expect(term.output).toContain("w1999"), { timeout: guard(10_000), interval: 50 });
    await tick(300);
    // Ink redraws a frame as tall as the screen by clearing the terminal (and the scrollback with it).
    expect(term.output).not.toContain("\u001b[2J");
    // Its last rows are shown, not its start.
    expect(term.output).toContain("w1999");
    expect(term.output).not.toMatch(/\bw0 w1 w2\b/);
    ink.unmount();
  });
});
