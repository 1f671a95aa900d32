/**
 * The one sanitiser for untrusted text printed to a terminal: anything the model wrote (replies, reasoning,
 * commands, reasons, questions and their options, tool names) and anything it caused (tool output, file
 * names, titles, errors that quote them). Every human view — `bdsh run`, `bdsh chat`, the prompts, `sessions`,
 * `doctor` — prints such text through `sanitize` and nothing else.
 *
 * Invariants:
 * - The result holds no ASCII control (U+0000–U+001F) but newline (tabs become two spaces), no DEL, no 8-bit control (U+0080–U+009F) and no bidi
 *   override or isolate, so it cannot move the cursor, hide text (SGR 8 and friends), rewrite a line (CR,
 *   backspace), retitle the terminal or write the clipboard (OSC 52), nor reorder what is read (U+202E).
 * - `strip` (prose, tool output): escape sequences are removed whole, as a terminal would consume them.
 * - `show` (what a person approves: a command): nothing is removed. Every control character is replaced by a
 *   visible stand-in (`␛`, `␍`, `⟨U+202E⟩`…), so the text between them stays on screen: a sequence that
 *   swallows `-r` or hides `rm -rf ~` in a terminal shows it here, with its escape marked.
 */

// CSI (7-bit, or the 8-bit U+009B); OSC, DCS, SOS, PM and APC strings up to their terminator; other two-or-more-byte ESC
// sequences (ESC c, ESC 7, ESC ( B). What is left of a malformed one is removed character by character below.
export const ESCAPE_SEQUENCE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d-\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)|\u001b[ -/]*[0-~]/g;

// ASCII controls but tab and newline, DEL, and the 8-bit controls U+0080–U+009F.
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Bidi embeddings, overrides, isolates and marks: they reorder or hide what a person reads. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Unicode line and paragraph separators: some terminals break the line, some do not. */
const SEPARATOR = /[\u2028\u2029]/g;

export type SanitizeMode = "strip" | "show";

export function sanitize(text: string, mode: SanitizeMode = "strip"): string {
  const lines = text.replace(SEPARATOR, "\n");
  if (mode === "show")
    return lines
      .replace(/\t/g, "  ")
      .replace(CONTROL, standIn)
      .replace(BIDI, (c) => `⟨${codePoint(c)}⟩`);
  return lines.replace(ESCAPE_SEQUENCE, "").replace(CONTROL, "").replace(BIDI, "").replace(/\t/g, "  ");
}

/** Whether `text` holds anything `sanitize` would change, tabs and separators aside (a prompt warns of it). */
export function hasControls(text: string): boolean {
  CONTROL.lastIndex = 0;
  BIDI.lastIndex = 0;
  return CONTROL.test(text) || BIDI.test(text);
}

/**
 * A command as a person approves it: `show` mode, cut into rows of at most `width` characters at any
 * character (never at words, which would fold runs of spaces), so every row can be drawn whole.
 */
export function commandRows(command: string, width: number): string[] {
  const size = Math.max(1, width);
  return sanitize(command, "show")
    .split("\n")
    .flatMap((line) => {
      const chars = [...line];
      if (chars.length <= size) return [line];
      const rows: string[] = [];
      for (let at = 0; at < chars.length; at += size) rows.push(chars.slice(at, at + size).join(""));
      return rows;
    });
}

/** The Control Pictures block for the ASCII controls and DEL (`␛` for ESC); an 8-bit control as `⟨U+009B⟩`. */
function standIn(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return "␡";
  return `⟨${codePoint(c)}⟩`;
}

function codePoint(c: string): string {
  return `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
}
