/**
 * The numbered-line window shared by `read` of files and of spill locators (T10, C16).
 *
 * Limits: 2000 lines, 2000 characters per line (`… (line truncated to 2000 chars)`), 51,200 bytes per call.
 * Footers, exactly:
 *   `(Showing lines A-B of T. Use offset=B+1 to continue.)`
 *   `(Output capped. Showing lines A-B. Use offset=B+1 to continue.)`
 *   `(End of file - total N lines)`
 */

export const READ_MAX_LINES = 2000;
export const READ_MAX_LINE_CHARS = 2000;
export const READ_MAX_BYTES = 51_200;

/** `firstLine`..`lastLine` were shown (1-based; `lastLine` < `firstLine` when none were) of `totalLines`. */
export type LineWindow =
  | { ok: true; body: string; firstLine: number; lastLine: number; totalLines: number }
  | { ok: false; totalLines: number };

/**
 * One scan: the total line count and the start offsets of lines `first..last` only (a 50 MB file has
 * ~10^6 lines; keeping every offset would cost more than the scan). A final line without `\n` counts; a
 * trailing `\n` adds no empty line.
 */
function scanLines(content: Buffer, first: number, last: number): { total: number; starts: number[] } {
  const starts: number[] = [];
  let total = 0;
  let position = 0;
  while (position < content.length) {
    total += 1;
    if (total >= first && total <= last + 1) starts.push(position);
    const newline = content.indexOf(10, position);
    if (newline === -1) break;
    position = newline + 1;
  }
  return { total, starts };
}

export function renderWindow(content: Buffer, offset: number, limit: number): LineWindow {
  const wanted = offset - 1 + Math.min(limit, READ_MAX_LINES);
  const { total, starts } = scanLines(content, offset, wanted);
  if (offset > total && !(offset === 1 && total === 0)) return { ok: false, totalLines: total };
  const last = Math.min(total, wanted);
  const lines: string[] = [];
  let bytes = 0;
  let capped = false;
  let shownEnd = offset - 1;
  for (let number = offset; number <= last; number += 1) {
    const index = number - offset;
    const end = starts[index + 1] ?? content.length;
    let text = content.toString("utf8", starts[index]!, end).replace(/\r?\n$/, "");
    if (text.length > READ_MAX_LINE_CHARS) {
      text = `${text.slice(0, READ_MAX_LINE_CHARS)}… (line truncated to ${READ_MAX_LINE_CHARS} chars)`;
    }
    const line = `${number}: ${text}`;
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size > READ_MAX_BYTES && lines.length > 0) {
      capped = true;
      break;
    }
    lines.push(line);
    bytes += size;
    shownEnd = number;
  }
  let footer: string;
  if (capped) {
    footer = `(Output capped. Showing lines ${offset}-${shownEnd}. Use offset=${shownEnd + 1} to continue.)`;
  } else if (shownEnd < total) {
    footer = `(Showing lines ${offset}-${shownEnd} of ${total}. Use offset=${shownEnd + 1} to continue.)`;
  } else {
    footer = `(End of file - total ${total} lines)`;
  }
  return {
    ok: true,
    body: [...lines, footer].join("\n"),
    firstLine: offset,
    lastLine: shownEnd,
    totalLines: total,
  };
}
