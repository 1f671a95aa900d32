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

export type LineWindow = { ok: true; body: string } | { ok: false; totalLines: number };

/** Newline offsets scanned once; a final line without `\n` counts, a trailing `\n` adds no empty line. */
export function lineStarts(content: Buffer): number[] {
  const starts = [0];
  let index = content.indexOf(10);
  while (index !== -1) {
    starts.push(index + 1);
    index = content.indexOf(10, index + 1);
  }
  if (starts[starts.length - 1] === content.length) starts.pop();
  return starts;
}

export function renderWindow(content: Buffer, offset: number, limit: number): LineWindow {
  const starts = lineStarts(content);
  const total = starts.length;
  if (offset > total && !(offset === 1 && total === 0)) return { ok: false, totalLines: total };
  const last = Math.min(total, offset - 1 + Math.min(limit, READ_MAX_LINES));
  const lines: string[] = [];
  let bytes = 0;
  let capped = false;
  let shownEnd = offset - 1;
  for (let number = offset; number <= last; number += 1) {
    const end = number < total ? starts[number]! : content.length;
    let text = content.toString("utf8", starts[number - 1]!, end).replace(/\r?\n$/, "");
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
  return { ok: true, body: [...lines, footer].join("\n") };
}
