/**
 * `spokenText`: the one cleaner every spoken path uses (seed 000 streaming-tts.md: "All spoken text is
 * cleaned by one cleaner, all paths"). The streaming dispatcher, the per-sentence fallback, the whole-file
 * reply and `bdsh speak` all call it; nothing else turns model text into speech text.
 *
 * Invariants:
 * - Reasoning (`<think>…</think>`, closed or not) is never spoken.
 * - A fenced code block is announced in a few words, never read out. Inline code keeps its text.
 * - Markdown is reduced to its words: emphasis marks, heading and quote markers, list bullets and numbers
 *   go; a link or image becomes its text; a bare URL becomes its host name; a table becomes its cells,
 *   one row a sentence; HTML tags and emoji go.
 * - The result has no line breaks and no runs of spaces; empty means "nothing to say".
 */

/** What is said in place of a fenced code block. */
export const CODE_BLOCK_ANNOUNCEMENT = "There is a code block on screen.";

const THINK_BLOCK = /<think>[\s\S]*?(?:<\/think>|$)/gi;
const FENCE = /^[ \t]*(```|~~~)[^\n]*\n?[\s\S]*?(?:^[ \t]*\1[ \t]*$|(?![\s\S]))/gm;
const IMAGE = /!\[([^\]]*)\]\([^)]*\)/g;
const LINK = /\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)/g;
const AUTOLINK = /<((?:https?|ftp):\/\/[^>\s]+)>/gi;
const URL = /\b(?:https?|ftp):\/\/[^\s<>()"']+|\bwww\.[^\s<>()"']+/gi;
const HTML_TAG = /<\/?[a-z][a-z0-9-]*(?:\s[^<>]*)?\/?>/gi;
// Pictographs, their modifiers and joiners, keycap marks, regional indicators (flags).
const EMOJI = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\u{1F1E6}-\u{1F1FF}]|\u{FE0F}|\u{200D}|\u{20E3}/gu;
const TERMINATED = /[.!?…。！？:;,]$/;

export function spokenText(text: string): string {
  let out = text.replace(THINK_BLOCK, " ");
  out = out.replace(FENCE, `\n${CODE_BLOCK_ANNOUNCEMENT}\n`);
  out = out.replace(IMAGE, (_m, alt: string) => alt);
  out = out.replace(LINK, (_m, label: string) => label);
  out = out.replace(AUTOLINK, (_m, url: string) => hostOf(url));
  out = out.replace(URL, (url) => hostOf(url));
  out = out.replace(HTML_TAG, " ");
  out = out.replace(/`+([^`\n]*)`+/g, "$1");
  out = out.replace(/`+/g, "");
  out = lines(out);
  out = out.replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, "$2");
  out = out.replace(/(^|[^\p{L}\p{N}*_])([*_])(?=\S)([^*_\n]*?\S)\2(?![\p{L}\p{N}])/gu, "$1$3");
  out = out.replace(/~~(?=\S)([\s\S]*?\S)~~/g, "$1");
  out = out.replace(/(^|\s)[*_~#]+(?=\s|$)/g, "$1");
  out = out.replace(EMOJI, "");
  out = out.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_m, name: string) => ENTITIES[name] ?? " ");
  return out.replace(/\s+/g, " ").trim();
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", nbsp: " " };

/** Line-level markdown: headings, quotes, list markers, tables, rules. Lines become sentences or clauses. */
function lines(text: string): string {
  const out: string[] = [];
  for (const raw of text.split("\n")) {
    let line = raw.trim();
    if (line === "") {
      out.push("");
      continue;
    }
    if (/^([-*_])(\s*\1){2,}$/.test(line)) continue; // a horizontal rule
    if (/^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?$/.test(line)) continue; // a table's separator row
    let heading = false;
    const headingMatch = /^#{1,6}\s+(.*?)\s*#*$/.exec(line);
    if (headingMatch) {
      line = headingMatch[1] ?? "";
      heading = true;
    }
    line = line.replace(/^(>\s?)+/, "");
    const item = /^(?:[-*+•]|\d{1,3}[.)])\s+(.*)$/.exec(line);
    if (item) line = item[1] ?? "";
    line = line.replace(/^\[[ xX]\]\s+/, ""); // a task list's box
    if (line.includes("|") && /^\|.*\|$|\S\s*\|\s*\S/.test(line)) {
      line = line
        .replace(/^\||\|$/g, "")
        .split("|")
        .map((cell) => cell.trim())
        .filter((cell) => cell !== "")
        .join(", ");
      heading = true; // a row is a sentence of its own
    }
    if ((heading || item) && line !== "" && !TERMINATED.test(line)) line += ".";
    out.push(line);
  }
  return out.join("\n");
}

/** A URL said as its host: "https://docs.example.com/a?b" → "docs.example.com". */
function hostOf(url: string): string {
  const trailing = /[.,;:!?]+$/.exec(url)?.[0] ?? "";
  const bare = trailing ? url.slice(0, -trailing.length) : url;
  try {
    const parsed = new globalThis.URL(bare.startsWith("www.") ? `http://${bare}` : bare);
    return `${parsed.hostname.replace(/^www\./, "")}${trailing}`;
  } catch {
    return trailing;
  }
}
