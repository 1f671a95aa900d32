/**
 * Markdown for a terminal: the reply as it should read, not as it was typed.
 *
 * Invariants:
 * - Line-based: a line's rendering depends only on the lines before it, so `MarkdownStream` can print each
 *   completed line as the deltas arrive and `renderMarkdown(text)` is `push(text) + flush()` of one stream.
 *   Any split of the deltas gives the same output (a property test checks it). Two things wait for more
 *   input: a partial line (until its newline) and a table (until its first non-table line, so columns
 *   line up).
 * - Fences are tracked across deltas: inside a code block nothing is interpreted.
 * - The text is model output, so it is sanitised first (no escape sequences reach the terminal).
 * - Every output line ends with `\n`; an empty input gives "".
 */
import { type Palette, padEnd, sanitize, truncate, visibleWidth, wrapText } from "./style.js";

type Fence = { char: "`" | "~"; length: number };

const FENCE_OPEN = /^\s{0,3}(`{3,}|~{3,})\s*([^\s`]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const RULE = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const LIST = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TASK = /^\[([ xX~])\]\s+(.*)$/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$/;
const INDENTED_CODE = /^ {4,}\S/;

/** Marks a held piece; a private-use character, removed from the input first so text cannot forge one. */
const HOLD = "\ue000";

/** Inline markup: code spans, links, emphasis. Code and URLs are kept out of the emphasis passes. */
export function renderInline(text: string, p: Palette): string {
  const held: string[] = [];
  const hold = (s: string) => `\ue000${held.push(s) - 1}\ue000`;
  let s = text
    .replaceAll(HOLD, "")
    .replace(/(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g, (_, _ticks: string, code: string) =>
      hold(p.cyan(code.length > 2 && code.startsWith(" ") && code.endsWith(" ") ? code.slice(1, -1) : code)),
    );
  s = s.replace(/!\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (_, alt: string, url: string) =>
    hold(`${p.dim(`[image${alt ? `: ${alt}` : ""}]`)} ${p.dim(`(${url})`)}`),
  );
  s = s.replace(/\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (_, label: string, url: string) =>
    label === url ? hold(p.cyan(url)) : `${label} ${hold(p.dim(`(${url})`))}`,
  );
  s = s.replace(/<((?:https?|mailto):[^>\s]+)>/g, (_, url: string) => hold(p.cyan(url)));
  s = s.replace(/(https?:\/\/[^\s)<>\ue000]+)/g, (url: string) => hold(url));
  s = s.replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, (_, inner: string) => p.bold(inner));
  s = s.replace(
    /(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g,
    (_, before: string, inner: string) => before + p.bold(inner),
  );
  const italic = p.italic ?? ((x: string) => x);
  s = s.replace(
    /(^|[^*\w])\*([^\s*](?:[^*]*[^\s*])?)\*(?!\*)/g,
    (_, before: string, inner: string) => before + italic(inner),
  );
  s = s.replace(
    /(^|[^\w])_([^\s_](?:[^_]*[^\s_])?)_(?!\w)/g,
    (_, before: string, inner: string) => before + italic(inner),
  );
  s = s.replace(/~~(?=\S)([\s\S]*?\S)~~/g, (_, inner: string) => p.dim(inner));
  // Restore held pieces; a held piece may itself hold another (a link's label with code in it).
  for (let round = 0; round < 3 && s.includes("\ue000"); round++) {
    s = s.replace(/\ue000(\d+)\ue000/g, (_, index: string) => held[Number(index)] ?? "");
  }
  return s;
}

function cellsOf(row: string): string[] {
  const trimmed = row.trim().replace(/^\|/, "").replace(/\|$/, "");
  return trimmed.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

/** Streams markdown: `push` returns the rendered lines completed by `delta`; `flush` the rest. */
export class MarkdownStream {
  private pending = "";
  private fence: Fence | undefined;
  private table: string[] = [];

  constructor(
    private readonly p: Palette,
    private readonly width: number,
  ) {}

  push(delta: string): string {
    this.pending += delta;
    const end = this.pending.lastIndexOf("\n");
    if (end < 0) return "";
    const complete = this.pending.slice(0, end);
    this.pending = this.pending.slice(end + 1);
    return this.emit(complete.split("\n").flatMap((line) => this.line(line)));
  }

  flush(): string {
    const out: string[] = [];
    if (this.pending !== "") out.push(...this.line(this.pending));
    this.pending = "";
    out.push(...this.endTable());
    if (this.fence) {
      out.push(this.p.dim("└─"));
      this.fence = undefined;
    }
    return this.emit(out);
  }

  private emit(lines: string[]): string {
    return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
  }

  private line(raw: string): string[] {
    const line = sanitize(raw);
    const { p, width } = this;
    if (this.fence) {
      const close = line.trim();
      if (
        close.length >= this.fence.length &&
        close === this.fence.char.repeat(close.length) &&
        /^\s{0,3}\S/.test(line)
      ) {
        this.fence = undefined;
        return [p.dim("└─")];
      }
      return [`${p.dim("│")} ${line}`];
    }
    if (this.table.length > 0) {
      if (TABLE_ROW.test(line)) {
        this.table.push(line);
        return [];
      }
      return [...this.endTable(), ...this.line(raw)];
    }
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      const marker = fence[1]!;
      this.fence = { char: marker[0] as "`" | "~", length: marker.length };
      return [p.dim(fence[2] ? `┌─ ${fence[2]}` : "┌─")];
    }
    if (TABLE_ROW.test(line)) {
      this.table.push(line);
      return [];
    }
    if (line.trim() === "") return [""];
    const heading = HEADING.exec(line);
    if (heading) {
      const text = renderInline(heading[2]!, p);
      const level = heading[1]!.length;
      const styled =
        level === 1 ? p.bold(p.magenta(text)) : level === 2 ? p.bold(p.cyan(text)) : p.bold(text);
      return wrapText(styled, width);
    }
    if (RULE.test(line)) return [p.dim("─".repeat(Math.max(1, Math.min(width, 60))))];
    const quote = QUOTE.exec(line);
    if (quote) return wrapText(renderInline(quote[1]!, p), width, p.dim("│ "));
    const item = LIST.exec(line);
    if (item) {
      const indent = " ".repeat(Math.min(item[1]!.length, 12));
      const ordered = /\d/.test(item[2]!);
      let body = item[3]!;
      let bullet = ordered ? `${item[2]!} ` : "• ";
      const task = TASK.exec(body);
      if (task) {
        const mark = task[1]!.toLowerCase();
        bullet = mark === "x" ? p.green("[x] ") : mark === "~" ? p.yellow("[~] ") : "[ ] ";
        body = task[2]!;
      }
      const hang = " ".repeat(visibleWidth(bullet));
      return wrapText(renderInline(body, p), width, indent + bullet, indent + hang);
    }
    if (INDENTED_CODE.test(line)) return [line];
    return wrapText(renderInline(line.trim(), p), width);
  }

  private endTable(): string[] {
    const rows = this.table;
    this.table = [];
    if (rows.length === 0) return [];
    const { p, width } = this;
    const hasHeader = rows.length >= 2 && TABLE_SEPARATOR.test(rows[1]!);
    const body = hasHeader ? [rows[0]!, ...rows.slice(2)] : rows;
    const cells = body.map((row) => cellsOf(row).map((cell) => renderInline(cell, p)));
    const columns = Math.max(...cells.map((row) => row.length));
    const widths = Array.from({ length: columns }, (_, i) =>
      Math.max(1, ...cells.map((row) => visibleWidth(row[i] ?? ""))),
    );
    // Shrink the widest columns until the table fits (" │ " between columns).
    const budget = Math.max(columns * 3, width - (columns - 1) * 3);
    while (widths.reduce((a, b) => a + b, 0) > budget) {
      const widest = widths.indexOf(Math.max(...widths));
      if (widths[widest]! <= 3) break;
      widths[widest]!--;
    }
    const render = (row: string[], header: boolean) =>
      widths
        .map((w, i) => {
          const cell = truncate(row[i] ?? "", w);
          return padEnd(header ? p.bold(cell) : cell, w);
        })
        .join(p.dim(" │ "))
        .trimEnd();
    const out: string[] = [];
    for (const [index, row] of cells.entries()) {
      out.push(render(row, hasHeader && index === 0));
      if (hasHeader && index === 0) out.push(p.dim(widths.map((w) => "─".repeat(w)).join("─┼─")));
    }
    return out;
  }
}

/** The whole text rendered at once; the same as streaming it through `MarkdownStream` in any pieces. */
export function renderMarkdown(text: string, p: Palette, width: number): string {
  const stream = new MarkdownStream(p, width);
  return stream.push(text) + stream.flush();
}
