/**
 * Chat's key bindings as a reducer (chat-input.ts): the editor, the slash-command menu, history recall,
 * leaving, and the modals' keys, without a terminal.
 */
import { describe, expect, it } from "vitest";
import {
  EMPTY_INPUT,
  EXIT_CONFIRM_MS,
  EXIT_CONFIRM_TEXT,
  type InputContext,
  type InputEffect,
  type InputState,
  inputReducer,
  modalAction,
} from "../../../src/cli/chat/chat-input.js";
import type { Modal } from "../../../src/cli/chat/chat-screen.js";
import type { Key } from "../../../src/cli/chat/keys.js";

const idle: InputContext = { running: false, now: 10_000, recall: () => undefined };

/** Feeds `keys` in order; returns the last state and every effect. */
function press(keys: Key[], context: InputContext = idle, from: InputState = EMPTY_INPUT) {
  let state = from;
  const effects: InputEffect[] = [];
  for (const key of keys) {
    const result = inputReducer(state, key, context);
    state = result.state;
    effects.push(...result.effects);
  }
  return { state, effects };
}

const text = (t: string): Key => ({ kind: "text", text: t });
const menuNames = (state: InputState) => state.menu?.commands.map((c) => c.name);

describe("chat's input reducer", () => {
  it("/ opens the menu, typing filters it, ↑/↓ move, Enter submits the selected command", () => {
    const opened = press([text("/")]);
    expect(menuNames(opened.state)?.[0]).toBe("/model");
    const filtered = press([text("/re")]);
    expect(menuNames(filtered.state)).toEqual(["/resume"]);
    const moved = press([text("/"), { kind: "down" }, { kind: "down" }, { kind: "up" }]);
    expect(moved.state.menu?.selected).toBe(1);
    const taken = press([text("/"), { kind: "down" }, { kind: "enter" }]);
    expect(taken.effects).toEqual([{ kind: "history-reset" }, { kind: "submit", text: "/resume" }]);
    expect(taken.state.editor.text).toBe("");
    expect(taken.state.menu).toBeUndefined();
  });

  it("Tab completes; Esc closes the menu until the text changes; a command with an argument has no menu", () => {
    expect(press([text("/mo"), { kind: "tab" }]).state.editor.text).toBe("/model ");
    expect(press([text("/c"), { kind: "tab" }]).state.editor.text).toBe("/co");
    const closed = press([text("/co"), { kind: "escape" }]);
    expect(closed.state.menu).toBeUndefined();
    expect(closed.effects).not.toContainEqual({ kind: "interrupt" }); // Esc closed the menu, nothing else
    expect(menuNames(press([{ kind: "backspace" }], idle, closed.state).state)).toEqual([
      "/cost",
      "/compact",
    ]);
    expect(press([text("/model x")]).state.menu).toBeUndefined();
    // Nothing matches: Enter sends the line as typed (answered "unknown command").
    expect(press([text("/zz"), { kind: "enter" }]).effects).toContainEqual({ kind: "submit", text: "/zz" });
  });

  it("↑ recalls history and closes the menu; a trailing backslash continues the line", () => {
    const recalling: InputContext = {
      ...idle,
      recall: (direction) => (direction === "up" ? "/exit" : undefined),
    };
    const recalled = press([{ kind: "up" }], recalling);
    expect(recalled.state.editor.text).toBe("/exit");
    expect(recalled.state.menu).toBeUndefined();
    const continued = press([text("one\\"), { kind: "enter" }]);
    expect(continued.state.editor.text).toBe("one\n");
    expect(continued.effects.some((e) => e.kind === "submit")).toBe(false);
  });

  it("Ctrl-C clears, then asks, then leaves; while a turn runs it interrupts; Ctrl-D on an empty line leaves", () => {
    const cleared = press([text("draft"), { kind: "ctrl", key: "c" }]);
    expect(cleared.state.editor.text).toBe("");
    const asked = press([{ kind: "ctrl", key: "c" }], idle, cleared.state);
    expect(asked.state.footer).toBe(EXIT_CONFIRM_TEXT);
    expect(asked.effects).toEqual([]);
    expect(press([{ kind: "ctrl", key: "c" }], { ...idle, now: idle.now + 1 }, asked.state).effects).toEqual([
      { kind: "leave" },
    ]);
    const late = { ...idle, now: idle.now + EXIT_CONFIRM_MS };
    expect(press([{ kind: "ctrl", key: "c" }], late, asked.state).effects).toEqual([]);
    expect(press([text("x")], idle, asked.state).state.footer).toBe(""); // a key clears the note
    expect(press([{ kind: "ctrl", key: "c" }], { ...idle, running: true }).effects).toEqual([
      { kind: "interrupt" },
    ]);
    expect(press([{ kind: "ctrl", key: "d" }]).effects).toEqual([{ kind: "leave" }]);
    expect(press([{ kind: "escape" }]).effects).toEqual([{ kind: "interrupt" }]);
  });

  it("modal keys: an approval's choice keys, a picker's selection and number, a question's typed answer", () => {
    const approval: Modal = {
      kind: "approval",
      tool: "bash",
      summary: "rm -rf x",
      reason: "recursive-delete",
      answer: () => {},
    };
    expect(modalAction(approval, text("y"))).toEqual({ kind: "answer", value: "allow-once" });
    expect(modalAction(approval, text("q"))).toEqual({ kind: "none" });
    expect(modalAction(approval, { kind: "ctrl", key: "c" })).toEqual({
      kind: "answer",
      value: "deny",
      interrupt: true,
    });
    const picker: Modal = {
      kind: "picker",
      title: "t",
      items: [{ label: "a" }, { label: "b" }],
      selected: 0,
      answer: () => {},
    };
    expect(modalAction(picker, { kind: "up" })).toEqual({ kind: "changed", patch: { selected: 1 } });
    expect(modalAction(picker, text("2"))).toEqual({ kind: "answer", value: 1 });
    expect(modalAction(picker, text("3"))).toEqual({ kind: "none" });
    expect(modalAction(picker, { kind: "escape" })).toEqual({ kind: "answer", value: undefined });
    const question: Modal = {
      kind: "question",
      question: "q?",
      options: ["main", "dev"],
      typed: "2",
      answer: () => {},
    };
    expect(modalAction(question, text("1"))).toEqual({ kind: "changed", patch: { typed: "21" } });
    expect(modalAction(question, { kind: "enter" })).toEqual({ kind: "answer", value: "dev" });
  });
});
