/**
 * `SentenceChunker`: the model's text deltas in, speakable pieces out, as soon as each is complete (seed 000
 * streaming-tts.md, "Sentence chunker": accumulates deltas, strips `<think>` blocks even split across
 * deltas, flushes complete sentences).
 *
 * Invariants:
 * - Split-independent: any split of the same text into deltas yields the same pieces. Every decision looks
 *   only at the pending text from its start; when it needs a character not yet seen it waits.
 * - Lossless: the pieces, concatenated, are the text without its `<think>…</think>` blocks (an unclosed
 *   block hides everything after it). Pieces are raw text; `spokenText` cleans each before synthesis, and
 *   a piece that cleans to nothing is not spoken.
 * - A sentence ends at `.`, `!`, `?` or `…` (with any closing quotes or brackets) followed by white space,
 *   at `。`, `！` or `？` at once, and at a blank line. A `.` after an abbreviation, an initial or a list
 *   number does not end one; a `.` inside a number or a URL is never followed by white space.
 * - A fenced code block is one piece of its own, never cut (it is announced, not read).
 * - A piece is at most `maxChars` long outside code: a run-on is cut at its last clause mark (`,;:` and
 *   their full-width forms), else its last space, else hard at the limit (never inside a surrogate pair).
 */

export const DEFAULT_MAX_CHUNK_CHARS = 300;

const OPEN_TAG = "<think>";
const CLOSE_TAG = "</think>";
const ENDS = ".!?…";
const CJK_ENDS = "。！？";
const CLOSERS = "\"')]}»”’」』）】〕";
const ABBREVIATIONS = new Set([
  "mr",
  "mrs",
  "ms",
  "dr",
  "prof",
  "sr",
  "jr",
  "st",
  "vs",
  "etc",
  "e.g",
  "i.e",
  "cf",
  "approx",
  "dept",
  "est",
  "fig",
  "inc",
  "ltd",
  "co",
  "no",
  "nr",
  "vol",
  "ch",
  "p",
  "pp",
  "al",
  "jan",
  "feb",
  "mar",
  "apr",
  "jun",
  "jul",
  "aug",
  "sep",
  "sept",
  "oct",
  "nov",
  "dec",
  "u.s",
  "u.k",
  "a.m",
  "p.m",
  "ph.d",
  "mt",
  "ave",
]);

type Decision = { cut: number } | "wait" | "rest";

export class SentenceChunker {
  private readonly maxChars: number;
  private inThink = false;
  /** A tag's possible beginning at the end of the last delta ("<", "</thi"). */
  private carry = "";
  private pending = "";
  private fenceScan: FenceScan = {};

  constructor(options: { maxChars?: number } = {}) {
    this.maxChars = Math.max(8, options.maxChars ?? DEFAULT_MAX_CHUNK_CHARS);
  }

  /** The pieces this delta completes (raw text; see the invariants). */
  push(delta: string): string[] {
    const visible = this.visible(delta);
    this.pending += visible;
    // Inside an open code block only a new line can close it: skip the scan (and the string's flattening).
    if (this.fenceScan.from !== undefined && !visible.includes("\n")) return [];
    return this.drain(false);
  }

  /** The rest, at the end of the reply. The chunker is then empty and may be reused. */
  end(): string[] {
    if (!this.inThink) this.pending += this.carry;
    this.carry = "";
    this.inThink = false;
    const pieces = this.drain(true);
    if (this.pending !== "") pieces.push(this.pending);
    this.pending = "";
    this.fenceScan = {};
    return pieces;
  }

  /** Drops everything pending (a stop). */
  reset(): void {
    this.pending = "";
    this.fenceScan = {};
    this.carry = "";
    this.inThink = false;
  }

  private drain(final: boolean): string[] {
    const pieces: string[] = [];
    for (;;) {
      const decision = nextCut(this.pending, final, this.maxChars, this.fenceScan);
      if (decision === "wait" || decision === "rest") break;
      this.fenceScan = {};
      pieces.push(this.pending.slice(0, decision.cut));
      this.pending = this.pending.slice(decision.cut);
    }
    return pieces;
  }

  /** The delta without reasoning; a tag split across deltas is held back until it is whole. */
  private visible(delta: string): string {
    let rest = this.carry + delta;
    this.carry = "";
    let out = "";
    while (rest !== "") {
      const tag = this.inThink ? CLOSE_TAG : OPEN_TAG;
      const at = rest.toLowerCase().indexOf(tag);
      if (at !== -1) {
        if (!this.inThink) out += rest.slice(0, at);
        rest = rest.slice(at + tag.length);
        this.inThink = !this.inThink;
        continue;
      }
      const held = partialTagAtEnd(rest, tag);
      if (!this.inThink) out += rest.slice(0, rest.length - held);
      this.carry = rest.slice(rest.length - held);
      break;
    }
    return out;
  }
}

/** The length of the longest end of `text` that begins `tag` (so far). */
function partialTagAtEnd(text: string, tag: string): number {
  const lower = text.slice(-tag.length).toLowerCase();
  for (let n = Math.min(tag.length - 1, lower.length); n > 0; n--) {
    if (tag.startsWith(lower.slice(lower.length - n))) return n;
  }
  return 0;
}

const isSpace = (c: string | undefined) => c !== undefined && /\s/.test(c);

/** Whether a fence (```, ~~~) starts at `at`: true, false, or undefined when too few characters are seen. */
function fenceAt(s: string, at: number, final: boolean): boolean | undefined {
  let j = at;
  while (j < s.length && (s[j] === " " || s[j] === "\t") && j - at < 3) j++;
  const head = s.slice(j, j + 3);
  if (head === "```" || head === "~~~") return true;
  const partial = head.length < 3 && /^(`*|~*)$/.test(head);
  return partial && !final ? undefined : false;
}

function fenceMarker(s: string, at: number): string {
  return s
    .slice(at, at + 8)
    .trimStart()
    .slice(0, 3);
}

/**
 * Where the scan of an open code block resumes: the start of its last incomplete line, so a long block
 * streamed in small deltas is read once, not once per delta.
 */
type FenceScan = { from?: number };

function nextCut(s: string, final: boolean, max: number, scan: FenceScan): Decision {
  if (s === "") return "rest";
  const opening = fenceAt(s, 0, final);
  if (opening === undefined) return "wait";
  if (opening) return fenceEnd(s, final, scan);
  for (let i = 0; ; i++) {
    if (i >= max) return { cut: capCut(s, max) };
    if (i >= s.length) return final ? "rest" : "wait";
    const c = s[i]!;
    if (c === "\n") {
      const fence = fenceAt(s, i + 1, final);
      if (fence === undefined) return "wait";
      if (fence) return { cut: i + 1 };
      let k = i + 1;
      while (k < s.length && (s[k] === " " || s[k] === "\t")) k++;
      if (k >= s.length && !final) return "wait";
      if (s[k] === "\n" && i > 0 && s.slice(0, i).trim() !== "") return { cut: i };
      continue;
    }
    if (ENDS.includes(c)) {
      let j = i + 1;
      while (j < s.length && ENDS.includes(s[j]!)) j++;
      while (j < s.length && CLOSERS.includes(s[j]!)) j++;
      if (j > max) return { cut: capCut(s, max) };
      if (j >= s.length) return final ? "rest" : "wait";
      if (isSpace(s[j]) && !(c === "." && notAnEnd(s, i))) return { cut: j };
      i = j - 1;
      continue;
    }
    if (CJK_ENDS.includes(c)) {
      let j = i + 1;
      while (j < s.length && (CJK_ENDS.includes(s[j]!) || CLOSERS.includes(s[j]!))) j++;
      if (j > max) return { cut: capCut(s, max) };
      if (j >= s.length) return final ? "rest" : "wait";
      return { cut: j };
    }
  }
}

/** A `.` after an abbreviation, a one-letter initial, or a list number at the start of a line. */
function notAnEnd(s: string, dot: number): boolean {
  let start = dot;
  while (start > 0 && !isSpace(s[start - 1])) start--;
  const word = s
    .slice(start, dot)
    .replace(/^[("'[{«“‘]+/, "")
    .toLowerCase();
  if (word === "") return false;
  if (ABBREVIATIONS.has(word)) return true;
  if (/^\p{L}$/u.test(word)) return true;
  if (/^\d{1,3}$/.test(word) && (start === 0 || s[start - 1] === "\n")) return true;
  return false;
}

/** The end of a fenced block that starts the text: after its closing fence line. */
function fenceEnd(s: string, final: boolean, scan: FenceScan): Decision {
  const marker = fenceMarker(s, 0);
  let lineStart = scan.from ?? s.indexOf("\n");
  while (lineStart !== -1) {
    const at = lineStart + 1;
    const lineEnd = s.indexOf("\n", at);
    const line = lineEnd === -1 ? s.slice(at) : s.slice(at, lineEnd);
    if (
      line.trim() === marker ||
      (line.trim().startsWith(marker) && line.trim().replace(/[`~]/g, "") === "")
    ) {
      if (lineEnd !== -1) return { cut: lineEnd + 1 };
      scan.from = lineStart;
      return final ? "rest" : "wait";
    }
    if (lineEnd === -1) scan.from = lineStart; // lines before this one hold no closing fence
    lineStart = lineEnd;
  }
  return final ? "rest" : "wait";
}

/** Where a run-on over `max` characters is cut: after the last clause mark, else at the last space. */
function capCut(s: string, max: number): number {
  const window = s.slice(0, max);
  for (let i = window.length - 1; i > 0; i--) {
    const c = window[i]!;
    if ("，、；：".includes(c)) return i + 1;
    if (",;:".includes(c) && i + 1 < window.length && isSpace(window[i + 1])) return i + 1;
  }
  for (let i = window.length - 1; i > 0; i--) if (isSpace(window[i])) return i;
  const code = s.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}
