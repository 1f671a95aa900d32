/**
 * Terminal styling for the human views (`bdsh run`, `bdsh chat`): whether to colour, a palette of SGR
 * wrappers, and width arithmetic that ignores escape sequences.
 *
 * Invariants:
 * - Pure: strings in, strings out. The caller decides which stream it writes to and passes its `isTTY`.
 * - A disabled palette returns its input unchanged, so piped output carries no escape codes.
 * - `NO_COLOR` (https://no-color.org, any non-empty value) wins over `FORCE_COLOR`.
 * - Untrusted text is made safe by `sanitize` (./terminal-text.ts), re-exported here for the views.
 */
import { ESCAPE_SEQUENCE } from "./terminal-text.js";

export { sanitize } from "./terminal-text.js";

export type Palette = {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  magenta(s: string): string;
  /** Optional so a hand-written palette (tests, the chat TUI) need not supply it. */
  italic?(s: string): string;
};

/** NO_COLOR (non-empty) off; FORCE_COLOR=0/false off; any other FORCE_COLOR on; else the stream's TTY-ness. */
export function colorEnabled(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (env.NO_COLOR) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return !(force === "0" || force.toLowerCase() === "false");
  return stream.isTTY === true;
}

const sgr =
  (open: number, close: number) =>
  (s: string): string =>
    s === "" ? s : `\u001b[${open}m${s}\u001b[${close}m`;

const identity = (s: string): string => s;

export const PLAIN: Palette = {
  bold: identity,
  dim: identity,
  red: identity,
  green: identity,
  yellow: identity,
  cyan: identity,
  magenta: identity,
  italic: identity,
};

const COLOURED: Palette = {
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  cyan: sgr(36, 39),
  magenta: sgr(35, 39),
  italic: sgr(3, 23),
};

export function palette(enabled: boolean): Palette {
  return enabled ? COLOURED : PLAIN;
}

// Escape sequences take no columns (the palette's own; untrusted text is sanitised before it gets here).
const ANSI = ESCAPE_SEQUENCE;

export function stripAnsi(s: string): string {
  return s.replace(ANSI, "");
}

/** Columns one code point takes: 0 for combining marks and controls, 2 for East Asian wide and emoji. */
function charWidth(code: number): number {
  if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return 0;
  if ((code >= 0x300 && code <= 0x36f) || (code >= 0x200b && code <= 0x200f) || code === 0xfe0f) return 0;
  if (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  )
    return 2;
  return 1;
}

/** The number of terminal columns `s` takes, escape sequences not counted. */
export function visibleWidth(s: string): number {
  let width = 0;
  for (const ch of stripAnsi(s)) width += charWidth(ch.codePointAt(0)!);
  return width;
}

/**
 * `s` cut to at most `width` columns, ending in `…` when cut. Escape sequences are kept (they take no
 * columns) and a reset is appended after a cut so a style never leaks into the next line.
 */
export function truncate(s: string, width: number): string {
  if (width <= 0) return "";
  if (visibleWidth(s) <= width) return s;
  let out = "";
  let used = 0;
  let styled = false;
  let index = 0;
  ANSI.lastIndex = 0;
  while (index < s.length) {
    ANSI.lastIndex = index;
    const match = ANSI.exec(s);
    if (match && match.index === index) {
      out += match[0];
      styled = true;
      index += match[0].length;
      continue;
    }
    const ch = String.fromCodePoint(s.codePointAt(index)!);
    const w = charWidth(ch.codePointAt(0)!);
    if (used + w > width - 1) break;
    out += ch;
    used += w;
    index += ch.length;
  }
  return `${out}…${styled ? "\u001b[0m" : ""}`;
}

/** `s` padded with spaces on the right to `width` columns (never cut). */
export function padEnd(s: string, width: number): string {
  const gap = width - visibleWidth(s);
  return gap > 0 ? s + " ".repeat(gap) : s;
}

/**
 * One line for a terminal `width` columns wide, never cut mid-word by the terminal: kept whole when it fits,
 * else word-wrapped with the rows after the first aligned under the text that follows its first gap of two
 * or more spaces (a table's second column), or indented two.
 */
export function fitLine(line: string, width: number): string[] {
  if (visibleWidth(line) <= width) return [line];
  const columns = /^(\S.*?\s{2,})(\S.*)$/.exec(line);
  if (columns && visibleWidth(columns[1] as string) <= width / 2) {
    const head = columns[1] as string;
    return wrapText(columns[2] as string, width, head, " ".repeat(visibleWidth(head)));
  }
  const lead = /^\s*/.exec(line)?.[0] ?? "";
  return wrapText(line.slice(lead.length), width, lead, `${lead}  `);
}

/**
 * Word-wraps `text` so each line, prefix included, fits `width` columns: the first line starts with
 * `first`, the others with `rest`. A word longer than a line is kept whole (a URL or a path stays copyable).
 */
export function wrapText(text: string, width: number, first = "", rest = first): string[] {
  const words = text.split(" ").filter((word) => word !== "");
  if (words.length === 0) return [first.trimEnd()];
  const lines: string[] = [];
  let current = first + words[0]!;
  let currentWidth = visibleWidth(current);
  for (const word of words.slice(1)) {
    const w = visibleWidth(word);
    if (currentWidth + 1 + w <= width) {
      current += ` ${word}`;
      currentWidth += 1 + w;
    } else {
      lines.push(current);
      current = rest + word;
      currentWidth = visibleWidth(current);
    }
  }
  lines.push(current);
  return lines;
}
