/**
 * Line diffs for display: which lines of `before` were removed and which of `after` added.
 *
 * - `lineDiff` gives one run: a little context, then everything between the first and the last change
 *   (instruction review shows it whole).
 * - `diffHunks` gives unified-diff hunks (`@@ -a,b +c,d @@` and `context` lines around each change), for a
 *   file tool's `file-change` details, where a change near the top and one near the bottom of a long file
 *   must not pull the whole file in between.
 *
 * Common leading and trailing lines are trimmed first; the middle is a Myers diff (minimal), bounded to
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

/** Unified-diff hunks of an edit script, each change with `context` unchanged lines around it. */
export function diffHunks(script: readonly DiffLine[], context = 3): HunkLine[] {
  const changed: number[] = [];
  script.forEach((line, index) => {
    if (line.kind !== " ") changed.push(index);
  });
  const out: HunkLine[] = [];
  let i = 0;
  // Line numbers (1-based) in the old and the new text at script index `index`.
  let oldLine = 1;
  let newLine = 1;
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
