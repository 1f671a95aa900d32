/**
 * A line diff for display: which lines of `before` were removed and which of `after` added, with context.
 * Common leading and trailing lines are trimmed first; the middle is an LCS when it is small enough, else
 * all of it removed then all added (still a correct diff, only less minimal). Bounded: at most
 * MAX_CELLS table cells, so a huge edit cannot stall the renderer.
 */

export type DiffLine = { kind: " " | "-" | "+"; text: string };

const MAX_CELLS = 250_000;

export function lineDiff(before: string, after: string, context = 2): DiffLine[] {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const middle = diffMiddle(a.slice(start, endA), b.slice(start, endB));
  const lead = a.slice(Math.max(0, start - context), start).map((text) => ({ kind: " " as const, text }));
  const tail = a.slice(endA, endA + context).map((text) => ({ kind: " " as const, text }));
  return [...lead, ...middle, ...tail];
}

function diffMiddle(a: string[], b: string[]): DiffLine[] {
  if (a.length * b.length > MAX_CELLS) {
    return [
      ...a.map((text) => ({ kind: "-" as const, text })),
      ...b.map((text) => ({ kind: "+" as const, text })),
    ];
  }
  // lengths[i][j]: the LCS length of a[i..] and b[j..].
  const lengths = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i]![j] =
        a[i] === b[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: " ", text: a[i]! });
      i++;
      j++;
    } else if (lengths[i + 1]![j]! >= lengths[i]![j + 1]!) {
      out.push({ kind: "-", text: a[i++]! });
    } else {
      out.push({ kind: "+", text: b[j++]! });
    }
  }
  while (i < a.length) out.push({ kind: "-", text: a[i++]! });
  while (j < b.length) out.push({ kind: "+", text: b[j++]! });
  return out;
}
