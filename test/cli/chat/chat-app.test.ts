import { render } from "ink-testing-library";
import { createElement } from "react";
import { describe, expect, it } from "vitest";
import { ChatApp } from "../../../src/cli/chat/chat-app.js";
import { ChatScreen } from "../../../src/cli/chat/chat-screen.js";
import { editorOf } from "../../../src/cli/chat/editor.js";
import { PLAIN } from "../../../src/cli/render/style.js";

const tick = (ms = 80) => new Promise((r) => setTimeout(r, ms));

describe("chat app (Ink view of the chat screen)", () => {
  it("draws committed lines, the editor and later changes", async () => {
    const screen = new ChatScreen(PLAIN, 80, () => undefined);
    screen.note("session abc");
    const app = render(createElement(ChatApp, { screen, p: PLAIN, hint: "hint line" }));
    await tick();
    expect(app.lastFrame()).toContain("session abc");
    screen.setEditor(editorOf("hello"));
    await tick();
    expect(app.lastFrame()).toContain("› hello");
    app.unmount();
  });
});
