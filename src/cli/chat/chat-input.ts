/**
 * What a key does in `bdsh chat`, as a reducer apart from the controller so each binding is a pure
 * function: the input's state and a key give the next state and the effects for the controller
 * (chat-tui.ts) to carry out. Nothing here touches the screen, the agent or the terminal, so every binding
 * is tested without one.
 *
 * Invariants:
 * - `inputReducer` returns a new state and never changes the one given; the only outside input is
 *   `context` (whether a turn runs, the time, the history lookup).
 * - The slash-command menu is open exactly while the editor holds "/" and a word (slash-commands.ts
 *   `commandsMatching`) and the person has not closed it on that same text with Esc; ↑/↓ recalling history
 *   closes it, so ↑ goes on recalling.
 * - While a modal is open its keys go to `modalAction` only: an approval's answer key is never editor text.
 */
import { approvalChoices } from "../approval-choices.js";
import type { CommandMenu, Modal } from "./chat-screen.js";
import * as ed from "./editor.js";
import type { Key } from "./keys.js";
import { commandsMatching, completeCommand } from "./slash-commands.js";

/** Ctrl-C on an empty editor asks for a second one within this long before chat leaves. */
export const EXIT_CONFIRM_MS = 2000;
export const EXIT_CONFIRM_TEXT = "Press Ctrl-C again to leave (or Ctrl-D, or /exit).";

export type InputState = {
  readonly editor: ed.EditorState;
  readonly menu: CommandMenu | undefined;
  /** The editor text the person closed the menu on (Esc): it stays closed until the text changes. */
  readonly menuClosedFor: string | undefined;
  /** When an empty-editor Ctrl-C asked to confirm leaving (ms since the epoch); 0 when it did not. */
  readonly exitAskedAt: number;
  /** The one-line note under the editor ("press Ctrl-C again to leave"); "" for none. */
  readonly footer: string;
};

export const EMPTY_INPUT: InputState = {
  editor: ed.EMPTY_EDITOR,
  menu: undefined,
  menuClosedFor: undefined,
  exitAskedAt: 0,
  footer: "",
};

export type InputContext = {
  /** A turn runs: Ctrl-C interrupts it instead of clearing or leaving. */
  running: boolean;
  now: number;
  /** The history entry before (`up`) or after (`down`) the one shown, given the editor's text. */
  recall(direction: "up" | "down", text: string): string | undefined;
};

export type InputEffect =
  | { kind: "submit"; text: string }
  | { kind: "interrupt" }
  | { kind: "leave" }
  | { kind: "expand-reasoning" }
  /** Typing or clearing leaves the history's recall position. */
  | { kind: "history-reset" };

export type InputResult = { state: InputState; effects: InputEffect[] };

/** The next input state and the effects of `key` (no modal open). */
export function inputReducer(state: InputState, key: Key, context: InputContext): InputResult {
  const isCtrlC = key.kind === "ctrl" && key.key === "c";
  let next: InputState = {
    ...state,
    exitAskedAt: isCtrlC ? state.exitAskedAt : 0,
    footer: key.kind === "ctrl" ? state.footer : "",
  };
  const menu = menuKey(next, key);
  if (menu) return menu;
  const effects: InputEffect[] = [];
  const editor = editedBy(next, key, context, effects);
  if (effects.some((e) => e.kind === "submit")) next = { ...next, editor: ed.EMPTY_EDITOR };
  else if (editor) next = { ...next, editor };
  if (isCtrlC && !context.running && state.editor.text === "" && effects.length === 0) {
    if (context.now - state.exitAskedAt < EXIT_CONFIRM_MS) effects.push({ kind: "leave" });
    else next = { ...next, exitAskedAt: context.now, footer: EXIT_CONFIRM_TEXT };
  }
  // Typing opens the menu; a message recalled from history (↑/↓) does not, so ↑ goes on recalling.
  next = key.kind === "up" || key.kind === "down" ? { ...next, menu: undefined } : withMenu(next);
  return { state: next, effects };
}

/** The menu in step with the editor's text, keeping the selected command while it still matches. */
export function withMenu(state: InputState): InputState {
  const { text } = state.editor;
  const closedFor = text === state.menuClosedFor ? state.menuClosedFor : undefined;
  const commands = closedFor === undefined ? commandsMatching(text) : undefined;
  if (!commands) return { ...state, menuClosedFor: closedFor, menu: undefined };
  const was = state.menu;
  const kept = was ? commands.findIndex((c) => c.name === was.commands[was.selected]?.name) : -1;
  return { ...state, menuClosedFor: closedFor, menu: { commands, selected: Math.max(0, kept) } };
}

/** Keys the open menu takes (↑/↓, Tab, Enter, Esc); `undefined` for the rest, which edit as usual. */
function menuKey(state: InputState, key: Key): InputResult | undefined {
  const { menu } = state;
  if (!menu) return undefined;
  const chosen = menu.commands[menu.selected];
  switch (key.kind) {
    case "up":
    case "down": {
      if (menu.commands.length === 0) return undefined;
      const step = key.kind === "up" ? -1 : 1;
      const selected = (menu.selected + step + menu.commands.length) % menu.commands.length;
      return { state: { ...state, menu: { ...menu, selected } }, effects: [] };
    }
    case "tab": {
      const completed = completeCommand(state.editor.text) ?? (chosen ? `${chosen.name} ` : undefined);
      const editor = completed ? ed.editorOf(completed) : state.editor;
      return { state: withMenu({ ...state, editor }), effects: [] };
    }
    case "enter":
      if (!chosen) return undefined; // nothing matches: sent as typed, and answered "unknown command"
      return {
        state: { ...state, editor: ed.EMPTY_EDITOR, menu: undefined },
        effects: [{ kind: "submit", text: chosen.name }],
      };
    case "escape":
      return { state: { ...state, menu: undefined, menuClosedFor: state.editor.text }, effects: [] };
    default:
      return undefined;
  }
}

/** The editor after `key`, or `undefined` when the key acted on something else (its effects pushed). */
function editedBy(
  state: InputState,
  key: Key,
  context: InputContext,
  effects: InputEffect[],
): ed.EditorState | undefined {
  const { editor } = state;
  switch (key.kind) {
    case "text":
    case "paste":
      effects.push({ kind: "history-reset" });
      return ed.insert(editor, key.text);
    case "newline":
      return ed.insert(editor, "\n");
    case "enter":
      if (editor.text.endsWith("\\") && editor.cursor === editor.text.length)
        return ed.insert(ed.backspace(editor), "\n"); // a trailing backslash continues the line
      effects.push({ kind: "submit", text: editor.text });
      return undefined;
    case "backspace":
      return ed.backspace(editor);
    case "delete":
      return ed.deleteForward(editor);
    case "left":
      return ed.moveLeft(editor);
    case "right":
      return ed.moveRight(editor);
    case "home":
      return ed.lineStart(editor);
    case "end":
      return ed.lineEnd(editor);
    case "word-left":
      return ed.wordLeft(editor);
    case "word-right":
      return ed.wordRight(editor);
    case "up":
    case "down": {
      const moved = ed.moveVertical(editor, key.kind === "up" ? -1 : 1);
      if (moved) return moved;
      const recalled = context.recall(key.kind, editor.text);
      return recalled === undefined ? undefined : ed.editorOf(recalled);
    }
    case "escape":
      effects.push({ kind: "interrupt" });
      return undefined;
    case "tab": {
      const completed = completeCommand(editor.text);
      return completed === undefined ? undefined : ed.editorOf(completed);
    }
    case "ctrl":
      return ctrlKey(key.key, editor, context, effects);
  }
}

function ctrlKey(
  k: string,
  editor: ed.EditorState,
  context: InputContext,
  effects: InputEffect[],
): ed.EditorState | undefined {
  switch (k) {
    case "c":
      if (context.running) effects.push({ kind: "interrupt" });
      else if (editor.text !== "") {
        effects.push({ kind: "history-reset" });
        return ed.EMPTY_EDITOR;
      }
      return undefined; // an empty editor: the reducer asks to confirm leaving, or leaves
    case "d":
      if (editor.text === "") {
        effects.push({ kind: "leave" });
        return undefined;
      }
      return ed.deleteForward(editor);
    case "a":
      return ed.lineStart(editor);
    case "e":
      return ed.lineEnd(editor);
    case "u":
      return ed.deleteToLineStart(editor);
    case "k":
      return ed.deleteToLineEnd(editor);
    case "w":
      return ed.deleteWordBack(editor);
    case "o":
      effects.push({ kind: "expand-reasoning" });
      return undefined;
    default:
      return undefined;
  }
}

/** What a key does to an open modal. */
export type ModalAction =
  | { kind: "none" }
  /** The modal's own state changes (a picker's selection, a question's typed answer): the controller sets
   * it on the open modal, which keeps its identity (its `answer` closes it by reference). */
  | { kind: "changed"; patch: { selected: number } | { typed: string } }
  | { kind: "answer"; value: unknown; interrupt?: boolean };

/** The key bindings of the modals: an approval, a question, a picker. */
export function modalAction(modal: Modal, key: Key): ModalAction {
  const ctrlC = key.kind === "ctrl" && key.key === "c";
  switch (modal.kind) {
    case "approval": {
      if (key.kind === "text") {
        const c = key.text.trim().toLowerCase()[0];
        const choice = approvalChoices(modal.reason).find((option) => option.key === c);
        return choice ? { kind: "answer", value: choice.answer } : { kind: "none" };
      }
      if (key.kind === "escape") return { kind: "answer", value: "deny" };
      if (ctrlC) return { kind: "answer", value: "deny", interrupt: true };
      return { kind: "none" };
    }
    case "picker": {
      if (key.kind === "up" || key.kind === "down") {
        const step = key.kind === "up" ? -1 : 1;
        const selected = (modal.selected + step + modal.items.length) % modal.items.length;
        return { kind: "changed", patch: { selected } };
      }
      if (key.kind === "enter" || key.kind === "tab") return { kind: "answer", value: modal.selected };
      if (key.kind === "escape" || ctrlC) return { kind: "answer", value: undefined };
      if (key.kind === "text" && /^[1-9]$/.test(key.text) && Number(key.text) <= modal.items.length)
        return { kind: "answer", value: Number(key.text) - 1 };
      return { kind: "none" };
    }
    case "question": {
      if (key.kind === "text" || key.kind === "paste")
        return {
          kind: "changed",
          patch: { typed: ed.cleanInput(modal.typed + key.text).replace(/\n/g, " ") },
        };
      if (key.kind === "backspace")
        return { kind: "changed", patch: { typed: [...modal.typed].slice(0, -1).join("") } };
      if (key.kind === "enter") {
        const typed = modal.typed.trim();
        const picked = /^\d+$/.test(typed) ? modal.options[Number(typed) - 1] : undefined;
        return { kind: "answer", value: picked ?? typed };
      }
      if (key.kind === "escape") return { kind: "answer", value: undefined };
      if (ctrlC) return { kind: "answer", value: undefined, interrupt: true };
      return { kind: "none" };
    }
  }
}
