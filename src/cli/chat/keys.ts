/**
 * Keys from a raw-mode terminal (for the chat editor), decoded from the bytes the terminal sends.
 *
 * Invariants:
 * - Bracketed paste (`ESC[200~ … ESC[201~`, turned on with `PASTE_ON`) is one `paste` key holding the
 *   pasted text with every line ending as `\n`, however the terminal splits it across reads: a pasted
 *   three-line message is one message, never three Enters.
 * - Enter is `enter` (send); Alt+Enter, Shift+Enter (`ESC[13;2u`) and Ctrl-J are `newline` (a line
 *   break in the editor).
 * - A lone ESC at the end of a read is the Escape key (terminals send a sequence in one write); an
 *   unknown sequence is dropped, never typed into the editor.
 * - Control characters never reach the editor as text.
 */

export type Key =
  | { kind: "text"; text: string }
  | { kind: "paste"; text: string }
  | {
      kind:
        | "enter"
        | "newline"
        | "backspace"
        | "delete"
        | "left"
        | "right"
        | "up"
        | "down"
        | "home"
        | "end"
        | "word-left"
        | "word-right"
        | "escape"
        | "tab";
    }
  | { kind: "ctrl"; key: string };

export const PASTE_ON = "\u001b[?2004h";
export const PASTE_OFF = "\u001b[?2004l";
const PASTE_START = "\u001b[200~";
const PASTE_END = "\u001b[201~";

const CSI_KEYS: Record<string, Key["kind"]> = {
  A: "up",
  B: "down",
  C: "right",
  D: "left",
  H: "home",
  F: "end",
  "1~": "home",
  "7~": "home",
  "4~": "end",
  "8~": "end",
  "3~": "delete",
  "13;2u": "newline",
  "13;3u": "newline",
  "1;5D": "word-left",
  "1;5C": "word-right",
  "1;3D": "word-left",
  "1;3C": "word-right",
};

export class KeyDecoder {
  private paste: string | undefined;
  private pending = "";

  /** The keys in one read from the terminal. */
  push(chunk: string): Key[] {
    const keys: Key[] = [];
    let input = this.pending + chunk;
    this.pending = "";
    while (input.length > 0) {
      if (this.paste !== undefined) {
        const end = input.indexOf(PASTE_END);
        if (end < 0) {
          // Keep a possible partial end marker for the next read.
          const keep = partialSuffix(input, PASTE_END);
          this.paste += input.slice(0, input.length - keep);
          this.pending = input.slice(input.length - keep);
          return keys;
        }
        this.paste += input.slice(0, end);
        keys.push({ kind: "paste", text: normaliseNewlines(this.paste) });
        this.paste = undefined;
        input = input.slice(end + PASTE_END.length);
        continue;
      }
      if (input.startsWith(PASTE_START)) {
        this.paste = "";
        input = input.slice(PASTE_START.length);
        continue;
      }
      const consumed = this.one(input, keys);
      if (consumed === 0) {
        this.pending = input;
        return keys;
      }
      input = input.slice(consumed);
    }
    return keys;
  }

  /** Decodes one key at the start of `input`; returns how many characters it used (0: wait for more). */
  private one(input: string, keys: Key[]): number {
    const c = input[0] as string;
    if (c === "\u001b") return this.escape(input, keys);
    if (c === "\r") {
      keys.push({ kind: "enter" });
      return input[1] === "\n" ? 2 : 1;
    }
    if (c === "\n") {
      keys.push({ kind: "newline" });
      return 1;
    }
    if (c === "\u007f" || c === "\b") {
      keys.push({ kind: "backspace" });
      return 1;
    }
    if (c === "\t") {
      keys.push({ kind: "tab" });
      return 1;
    }
    const code = c.charCodeAt(0);
    if (code < 0x20) {
      keys.push({ kind: "ctrl", key: String.fromCharCode(code + 0x60) });
      return 1;
    }
    // A run of printable text up to the next control character.
    let end = 1;
    while (end < input.length) {
      const next = input.charCodeAt(end);
      if (next < 0x20 || next === 0x7f) break;
      end++;
    }
    const last = keys.at(-1);
    if (last?.kind === "text") last.text += input.slice(0, end);
    else keys.push({ kind: "text", text: input.slice(0, end) });
    return end;
  }

  private escape(input: string, keys: Key[]): number {
    if (input.length === 1) {
      keys.push({ kind: "escape" });
      return 1;
    }
    const next = input[1] as string;
    if (next === "\r" || next === "\n") {
      keys.push({ kind: "newline" }); // Alt+Enter
      return 2;
    }
    if (next === "[" || next === "O") {
      let i = 2;
      while (i < input.length) {
        const code = input.charCodeAt(i);
        if (code >= 0x40 && code <= 0x7e && !(i === 2 && input[i] === "[")) break;
        i++;
      }
      if (i >= input.length) {
        return input.length > 16 ? input.length : 0; // wait for the rest; too long: not a key, drop it
      }
      const body = input.slice(2, i + 1);
      const kind = CSI_KEYS[body];
      if (kind) keys.push({ kind } as Key);
      return i + 1;
    }
    if (next === "\u001b") {
      keys.push({ kind: "escape" });
      return 1;
    }
    if (next === "b") keys.push({ kind: "word-left" });
    else if (next === "f") keys.push({ kind: "word-right" });
    else if (next === "\u007f") keys.push({ kind: "ctrl", key: "w" }); // Alt+Backspace: delete a word
    return 2;
  }
}

function normaliseNewlines(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/** How many characters at the end of `text` could be the start of `marker`. */
function partialSuffix(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (marker.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}
