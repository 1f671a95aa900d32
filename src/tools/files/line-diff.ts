/**
 * Line diffs for display: which lines of `before` were removed and which of `after` added.
 *
 * - `lineDiff` gives one run: a little context, then everything between the first and the last change
 *   (instruction review shows it whole).
 * - `textHunks` gives unified-diff hunks (`@@ -a,b +c,d @@` and 3 context lines around each change) for a
 *   file tool's `file-change` details: a change near the top and one near the bottom of a long file do not
 *   pull in the lines between, and the texts' common start and end are trimmed by characters first
 *   (natively, a block at a time), so one replacement in a long file splits and diffs only its own lines.
 *
 * Common leading and trailing lines are trimmed; the middle is a Myers diff (minimal), bounded to
 * MAX_EDITS edits: past that it is all of the middle removed, then all of it added (still a correct diff,
 * only less minimal), so a rewritten file cannot stall the tool or the renderer.
 */

export type DiffLine = { kind: " " | "-" | "+"; text: string };
export type HunkLine = { kind: " " | "-" | "+" | "@"; text: string };

/** Edits the Myers search explores before giving up on a minimal diff (memory is about MAX_EDITS² ints). */
const MAX_EDITS = 1_000;

/** Lines of a text: the last newline ends the last line, it does not start an empty one. */
export function linesOf(text: string): string[] {
  if (text === "") return [];
  return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
}

export function lineDiff(before: string, after: string, context = 2): DiffLine[] {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  const { start, endA, endB } = commonEnds(a, b);
  const middle = diffMiddle(a.slice(start, endA), b.slice(start, endB));
  const lead = a.slice(Math.max(0, start - context), start).map((text) => ({ kind: " " as const, text }));
  const tail = a.slice(endA, endA + context).map((text) => ({ kind: " " as const, text }));
  return [...lead, ...middle, ...tail];
}

/** The whole edit script from `a` to `b`, unchanged lines included. */
export function diffAll(a: readonly string[], b: readonly string[]): DiffLine[] {
  const { start, endA, endB } = commonEnds(a, b);
  const same = (text: string): DiffLine => ({ kind: " ", text });
  return [
    ...a.slice(0, start).map(same),
    ...diffMiddle(a.slice(start, endA), b.slice(start, endB)),
    ...a.slice(endA).map(same),
  ];
}

/** The hunks from `before` to `after` and how many lines were added and removed in all. */
export function textHunks(
  before: string,
  after: string,
  context = 3,
): { hunks: HunkLine[]; added: number; removed: number } {
  // The middle runs from the start of the line where the texts first differ to just after the first
  // newline of their common end: whole lines on both sides.
  const start = lineStartBefore(before, commonPrefix(before, after));
  const tail = commonSuffix(before, after, Math.min(before.length, after.length) - start);
  const newline = tail === 0 ? -1 : before.indexOf("\n", before.length - tail);
  const endBefore = newline === -1 ? before.length : newline + 1;
  const endAfter = after.length - (before.length - endBefore);
  const middle = diffAll(linesOf(before.slice(start, endBefore)), linesOf(after.slice(start, endAfter)));
  const lead = lastLines(before, start, context);
  const trail = firstLines(before, endBefore, context);
  const same = (text: string): DiffLine => ({ kind: " ", text });
  const script = [...lead.map(same), ...middle, ...trail.map(same)];
  const first = countNewlines(before, start) - lead.length + 1;
  return {
    hunks: diffHunks(script, context, { old: first, new: first }),
    added: middle.filter((line) => line.kind === "+").length,
    removed: middle.filter((line) => line.kind === "-").length,
  };
}

/** Unified-diff hunks of an edit script, each change with `context` unchanged lines around it. */
export function diffHunks(
  script: readonly DiffLine[],
  context = 3,
  firstLine: { old: number; new: number } = { old: 1, new: 1 },
): HunkLine[] {
  const changed: number[] = [];
  script.forEach((line, index) => {
    if (line.kind !== " ") changed.push(index);
  });
  const out: HunkLine[] = [];
  let i = 0;
  // Line numbers (1-based) in the old and the new text at script index `index`.
  let oldLine = firstLine.old;
  let newLine = firstLine.new;
  let index = 0;
  const advance = (to: number) => {
    for (; index < to; index++) {
      if (script[index]!.kind !== "+") oldLine++;
      if (script[index]!.kind !== "-") newLine++;
    }
  };
  while (i < changed.length) {
    const first = Math.max(0, changed[i]! - context);
    let last = changed[i]!;
    // Changes closer than twice the context share one hunk.
    while (i + 1 < changed.length && changed[i + 1]! - last <= 2 * context) last = changed[++i]!;
    i++;
    const end = Math.min(script.length, last + context + 1);
    advance(first);
    const body = script.slice(first, end);
    const oldCount = body.filter((line) => line.kind !== "+").length;
    const newCount = body.filter((line) => line.kind !== "-").length;
    out.push({ kind: "@", text: `@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@` });
    out.push(...body);
  }
  return out;
}

/** Unified diff's range: an empty range names the line before it. */
const range = (start: number, count: number): string =>
  count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`;

/** Characters compared per native comparison before the last block is walked one by one. */
const BLOCK = 4_096;

function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i + BLOCK <= max && a.slice(i, i + BLOCK) === b.slice(i, i + BLOCK)) i += BLOCK;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** How many characters `a` and `b` share at their ends, at most `max`. */
function commonSuffix(a: string, b: string, max: number): number {
  let n = 0;
  while (
    n + BLOCK <= max &&
    a.slice(a.length - n - BLOCK, a.length - n) === b.slice(b.length - n - BLOCK, b.length - n)
  )
    n += BLOCK;
  while (n < max && a.charCodeAt(a.length - n - 1) === b.charCodeAt(b.length - n - 1)) n++;
  return n;
}

/** The start of the line `at` is in. */
const lineStartBefore = (text: string, at: number): number =>
  at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;

/** Up to `n` whole lines ending just before `end` (a line start). */
function lastLines(text: string, end: number, n: number): string[] {
  let from = end;
  for (let i = 0; i < n && from > 0; i++) from = from < 2 ? 0 : text.lastIndexOf("\n", from - 2) + 1;
  return linesOf(text.slice(from, end));
}

/** Up to `n` whole lines from `start` (a line start). */
function firstLines(text: string, start: number, n: number): string[] {
  let end = start;
  for (let i = 0; i < n && end < text.length; i++) {
    const newline = text.indexOf("\n", end);
    end = newline === -1 ? text.length : newline + 1;
  }
  return linesOf(text.slice(start, end));
}

function countNewlines(text: string, end: number): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1 && at < end; at = text.indexOf("\n", at + 1)) count++;
  return count;
}

function commonEnds(a: readonly string[], b: readonly string[]) {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return { start, endA, endB };
}

function diffMiddle(a: readonly string[], b: readonly string[]): DiffLine[] {
  const removed = a.map((text) => ({ kind: "-" as const, text }));
  const added = b.map((text) => ({ kind: "+" as const, text }));
  if (a.length === 0 || b.length === 0) return [...removed, ...added];
  // Each distinct line once as a number: the search compares numbers, not strings, along long runs of
  // equal lines (two changes 100,000 lines apart).
  const ids = new Map<string, number>();
  const idOf = (line: string) => {
    let id = ids.get(line);
    if (id === undefined) {
      id = ids.size;
      ids.set(line, id);
    }
    return id;
  };
  return myers(Int32Array.from(a, idOf), Int32Array.from(b, idOf), a, b) ?? [...removed, ...added];
}

/**
 * Myers' O(ND) diff: for each edit count d, the furthest point reached on every diagonal k = x - y. The
 * frontier before each round is kept (its k ∈ [-d-1, d+1] slice) to walk the path back.
 */
function myers(
  ia: Int32Array,
  ib: Int32Array,
  a: readonly string[],
  b: readonly string[],
): DiffLine[] | undefined {
  const n = ia.length;
  const m = ib.length;
  const max = Math.min(n + m, MAX_EDITS);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!);
      let x = down ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && ia[x] === ib[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return walkBack(trace, a, b, d);
    }
  }
  return undefined;
}

function walkBack(trace: Int32Array[], a: readonly string[], b: readonly string[], last: number): DiffLine[] {
  const out: DiffLine[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = last; d > 0; d--) {
    const before = trace[d]!;
    const at = (k: number) => before[k + d + 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const fromK = down ? k + 1 : k - 1;
    const fromX = at(fromK);
    const fromY = fromX - fromK;
    while (x > fromX && y > fromY) {
      out.push({ kind: " ", text: a[--x]! });
      y--;
    }
    if (down) out.push({ kind: "+", text: b[--y]! });
    else out.push({ kind: "-", text: a[--x]! });
  }
  while (x > 0) {
    out.push({ kind: " ", text: a[--x]! });
    y--;
  }
  return out.reverse();
}
