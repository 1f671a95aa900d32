/**
 * The chat's multi-line input: text and a cursor, changed only by these pure functions.
 *
 * Invariants: `cursor` is always within `0..text.length`; text holds no control characters other than
 * `\n` (pasted tabs become spaces, other controls are dropped), so nothing typed can move the terminal's
 * cursor or restyle the screen.
 */

export type EditorState = { readonly text: string; readonly cursor: number };

export const EMPTY_EDITOR: EditorState = { text: "", cursor: 0 };

export function editorOf(text: string): EditorState {
  const clean = cleanInput(text);
  return { text: clean, cursor: clean.length };
}

/** Typed or pasted text as the editor keeps it. */
export function cleanInput(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to remove them
  return text.replace(/\t/g, "  ").replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, "");
}

export function insert(state: EditorState, text: string): EditorState {
  const clean = cleanInput(text);
  if (clean === "") return state;
  return {
    text: state.text.slice(0, state.cursor) + clean + state.text.slice(state.cursor),
    cursor: state.cursor + clean.length,
  };
}

export function backspace(state: EditorState): EditorState {
  if (state.cursor === 0) return state;
  const at = previousBoundary(state.text, state.cursor);
  return { text: state.text.slice(0, at) + state.text.slice(state.cursor), cursor: at };
}

export function deleteForward(state: EditorState): EditorState {
  if (state.cursor >= state.text.length) return state;
  const to = nextBoundary(state.text, state.cursor);
  return { text: state.text.slice(0, state.cursor) + state.text.slice(to), cursor: state.cursor };
}

export function moveLeft(state: EditorState): EditorState {
  return { ...state, cursor: previousBoundary(state.text, state.cursor) };
}

export function moveRight(state: EditorState): EditorState {
  return { ...state, cursor: nextBoundary(state.text, state.cursor) };
}

export function lineStart(state: EditorState): EditorState {
  return { ...state, cursor: state.text.lastIndexOf("\n", state.cursor - 1) + 1 };
}

export function lineEnd(state: EditorState): EditorState {
  const end = state.text.indexOf("\n", state.cursor);
  return { ...state, cursor: end < 0 ? state.text.length : end };
}

export function wordLeft(state: EditorState): EditorState {
  let i = state.cursor;
  while (i > 0 && /\s/.test(state.text[i - 1] as string)) i--;
  while (i > 0 && !/\s/.test(state.text[i - 1] as string)) i--;
  return { ...state, cursor: i };
}

export function wordRight(state: EditorState): EditorState {
  let i = state.cursor;
  const n = state.text.length;
  while (i < n && /\s/.test(state.text[i] as string)) i++;
  while (i < n && !/\s/.test(state.text[i] as string)) i++;
  return { ...state, cursor: i };
}

/** Ctrl-W: the word before the cursor. */
export function deleteWordBack(state: EditorState): EditorState {
  const to = wordLeft(state).cursor;
  return { text: state.text.slice(0, to) + state.text.slice(state.cursor), cursor: to };
}

/** Ctrl-U: the line before the cursor. */
export function deleteToLineStart(state: EditorState): EditorState {
  const from = lineStart(state).cursor;
  return { text: state.text.slice(0, from) + state.text.slice(state.cursor), cursor: from };
}

/** Ctrl-K: the line after the cursor. */
export function deleteToLineEnd(state: EditorState): EditorState {
  const to = lineEnd(state).cursor;
  return { text: state.text.slice(0, state.cursor) + state.text.slice(to), cursor: state.cursor };
}

/** The cursor's line and column (0-based). */
export function cursorPosition(state: EditorState): { line: number; column: number } {
  const before = state.text.slice(0, state.cursor);
  const line = before.split("\n").length - 1;
  return { line, column: state.cursor - (before.lastIndexOf("\n") + 1) };
}

/** Up/down within the text; `undefined` when the cursor is already on the first/last line. */
export function moveVertical(state: EditorState, direction: -1 | 1): EditorState | undefined {
  const lines = state.text.split("\n");
  const { line, column } = cursorPosition(state);
  const target = line + direction;
  if (target < 0 || target >= lines.length) return undefined;
  let offset = 0;
  for (let i = 0; i < target; i++) offset += (lines[i] as string).length + 1;
  return { ...state, cursor: offset + Math.min(column, (lines[target] as string).length) };
}

function previousBoundary(text: string, at: number): number {
  if (at <= 0) return 0;
  const code = text.charCodeAt(at - 1);
  return code >= 0xdc00 && code <= 0xdfff && at >= 2 ? at - 2 : at - 1; // a surrogate pair is one step
}

function nextBoundary(text: string, at: number): number {
  if (at >= text.length) return text.length;
  const code = text.charCodeAt(at);
  return code >= 0xd800 && code <= 0xdbff && at + 1 < text.length ? at + 2 : at + 1;
}
