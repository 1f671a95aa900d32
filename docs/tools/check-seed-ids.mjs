#!/usr/bin/env node
/**
 * Finds every design-inventory id (L9, M17, SP8, §9, …) and every "issue N" that the code under src/ cites,
 * and checks them against docs/seed-ids.md.
 *
 *   node docs/tools/check-seed-ids.mjs            report; exit 1 if an id is unknown or undocumented
 *   node docs/tools/check-seed-ids.mjs --where    one markdown line per id: the files that cite it
 *   node docs/tools/check-seed-ids.mjs --json     everything as JSON
 *   node docs/tools/check-seed-ids.mjs --write    refresh the "where" column of docs/seed-ids.md from src/
 *
 * Comments are read with the TypeScript parser (so a `//` inside a string or a regex is not a comment).
 * String literals and JSX text are read too and reported apart: an id there reaches a user or the model.
 * Markdown files under src/ count as a whole.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, "..", "..");

/**
 * The entries of the design inventory, by prefix: the highest number of each series. The inventory itself
 * is not in this repository; docs/seed-ids.md says in our words what each entry is.
 */
export const SERIES = { L: 19, R: 2, SP: 9, M: 26, C: 19, T: 22, G: 3, P: 9, S: 8 };

/** True when `id` (e.g. "SP8", "§9") names an entry of the inventory. */
export function isSeedId(id) {
  if (id === "§9") return true;
  const m = /^(SP|[LRMCTGPS])(\d+)$/.exec(id);
  if (!m) return false;
  const n = Number(m[2]);
  return n >= 1 && n <= SERIES[m[1]] && String(n) === m[2];
}

// An id, optionally a range of the same series ("P3–P5", "T1-T22"); not part of a longer word or number.
const ID_RE = /(?<![\w$-])(SP|[LRMCTGPS])(\d{1,3})(?:\s?[–-]\s?(?:\1)?(\d{1,3}))?(?![\w$])/g;
const SECTION_RE = /§\s?9\b/g;
const ISSUE_RE = /\b[Ii]ssues?\s+(\d{1,3})((?:\s*(?:,|and|&|\/)\s*\d{1,3})*)\b/g;

/**
 * Text that matches the id pattern but is not an id, each with why. Checked on the text around a match.
 * Keep this list short: anything else that looks like an id must be a real entry.
 */
export const NOT_IDS = [
  {
    re: /\bC[01] controls?\b/g,
    why: "C0 and C1 are the ASCII/ISO control-character sets, not context entries",
  },
];

function maskNotIds(text) {
  let out = text;
  for (const { re } of NOT_IDS) out = out.replace(re, (s) => " ".repeat(s.length));
  return out;
}

/** The ids and issue numbers cited in one piece of text. */
export function idsIn(text) {
  const masked = maskNotIds(text);
  const ids = [];
  for (const m of masked.matchAll(ID_RE)) {
    const [, prefix, a, b] = m;
    if (b !== undefined && Number(b) > Number(a) && Number(b) - Number(a) < 30) {
      for (let n = Number(a); n <= Number(b); n++) ids.push(`${prefix}${n}`);
    } else {
      ids.push(`${prefix}${a}`);
      if (b !== undefined) ids.push(`${prefix}${b}`);
    }
  }
  for (const _ of masked.matchAll(SECTION_RE)) ids.push("§9");
  const issues = [];
  for (const m of masked.matchAll(ISSUE_RE)) {
    issues.push(Number(m[1]));
    for (const more of (m[2] ?? "").matchAll(/\d{1,3}/g)) issues.push(Number(more[0]));
  }
  return { ids, issues };
}

function* walkFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) yield* walkFiles(p);
    else if (/\.(ts|tsx|mts|cts|js|mjs|md)$/.test(entry.name)) yield p;
  }
}

/** The comments and the literal texts of one TypeScript source, as two lists of strings. */
export function splitSource(fileName, text) {
  const kind = fileName.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
  const comments = new Map();
  const literals = [];
  const visit = (node) => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    if (node.kind === ts.SyntaxKind.JsxText) {
      literals.push(node.getText(sf));
      return;
    }
    for (const r of ts.getLeadingCommentRanges(text, node.pos) ?? [])
      comments.set(r.pos, text.slice(r.pos, r.end));
    for (const r of ts.getTrailingCommentRanges(text, node.end) ?? [])
      comments.set(r.pos, text.slice(r.pos, r.end));
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      node.kind === ts.SyntaxKind.TemplateHead ||
      node.kind === ts.SyntaxKind.TemplateMiddle ||
      node.kind === ts.SyntaxKind.TemplateTail
    ) {
      literals.push(node.text);
    }
    for (const child of node.getChildren(sf)) visit(child);
  };
  visit(sf);
  return { comments: [...comments.values()], literals };
}

/**
 * Everything src/ cites. `ids`: id → files citing it in a comment (or a markdown file); `visible`: id → files
 * citing it in a string or JSX text; `issues`: issue number → files.
 */
export function collectCitations(srcDir = join(repoRoot, "src")) {
  const ids = new Map();
  const visible = new Map();
  const issues = new Map();
  const add = (map, key, file) => {
    if (!map.has(key)) map.set(key, new Set());
    map.get(key).add(file);
  };
  for (const path of walkFiles(srcDir)) {
    const file = relative(repoRoot, path).split("\\").join("/");
    const text = readFileSync(path, "utf8");
    const parts = path.endsWith(".md") ? { comments: [text], literals: [] } : splitSource(path, text);
    for (const c of parts.comments) {
      const found = idsIn(c);
      for (const id of found.ids) add(ids, id, file);
      for (const n of found.issues) add(issues, n, file);
    }
    for (const l of parts.literals) {
      const found = idsIn(l);
      for (const id of found.ids) add(visible, id, file);
      for (const n of found.issues) add(issues, n, file);
    }
  }
  return { ids, visible, issues };
}

/** The ids docs/seed-ids.md explains: the first cell of each table row of its id tables. */
export function documentedIds(docPath = join(repoRoot, "docs", "seed-ids.md")) {
  const out = new Set();
  if (!existsSync(docPath)) return out;
  for (const line of readFileSync(docPath, "utf8").split("\n")) {
    const m = /^\|\s*(§9|(?:SP|[LRMCTGPS])\d+)\s*\|/.exec(line);
    if (m) out.add(m[1]);
  }
  return out;
}

/** The issue numbers docs/seed-ids.md explains: rows starting `| issue N |`. */
export function documentedIssues(docPath = join(repoRoot, "docs", "seed-ids.md")) {
  const out = new Set();
  if (!existsSync(docPath)) return out;
  for (const line of readFileSync(docPath, "utf8").split("\n")) {
    const m = /^\|\s*issue (\d+)\s*\|/.exec(line);
    if (m) out.add(Number(m[1]));
  }
  return out;
}

const ORDER = ["L", "R", "SP", "M", "C", "T", "G", "P", "S"];
export function compareIds(a, b) {
  const pa = /^(SP|[A-Z]|§)(\d+)$/.exec(a) ?? ["", a, "0"];
  const pb = /^(SP|[A-Z]|§)(\d+)$/.exec(b) ?? ["", b, "0"];
  const oa = ORDER.indexOf(pa[1]) === -1 ? 99 : ORDER.indexOf(pa[1]);
  const ob = ORDER.indexOf(pb[1]) === -1 ? 99 : ORDER.indexOf(pb[1]);
  return oa - ob || Number(pa[2]) - Number(pb[2]) || a.localeCompare(b);
}

/** The check: what src/ cites that is not an inventory entry, or not explained in docs/seed-ids.md. */
export function check() {
  const { ids, visible, issues } = collectCitations();
  const cited = new Set([...ids.keys(), ...visible.keys()]);
  const documented = documentedIds();
  const docIssues = documentedIssues();
  const sorted = [...cited].sort(compareIds);
  return {
    cited: sorted,
    unknown: sorted.filter((id) => !isSeedId(id)),
    undocumented: sorted.filter((id) => isSeedId(id) && !documented.has(id)),
    documentedButNotReal: [...documented].filter((id) => !isSeedId(id)).sort(compareIds),
    visible: [...visible.keys()].sort(compareIds),
    issues: [...issues.keys()].sort((a, b) => a - b),
    undocumentedIssues: [...issues.keys()].filter((n) => !docIssues.has(n)).sort((a, b) => a - b),
    where: { ids, visible, issues },
  };
}

/**
 * The "where" cell of one row: the files citing it, relative to src/ and grouped by folder
 * (`loop/ agent, recovery` is src/loop/agent.ts and src/loop/recovery.ts; `.ts` is left out). A file whose
 * string literals (text a user or the model sees) carry the id is marked "(in a string)".
 */
export function whereCell(key, result) {
  const map = typeof key === "number" ? result.where.issues : result.where.ids;
  const comments = [...(map.get(key) ?? [])];
  const strings = typeof key === "number" ? [] : [...(result.where.visible.get(key) ?? [])];
  const all = [...new Set([...comments, ...strings])].sort();
  if (all.length === 0) return "not cited yet";
  const byFolder = new Map();
  for (const file of all) {
    const path = file.replace(/^src\//, "");
    const slash = path.lastIndexOf("/");
    const folder = slash === -1 ? "" : path.slice(0, slash + 1);
    const name = path.slice(slash + 1).replace(/\.ts$/, "");
    if (!byFolder.has(folder)) byFolder.set(folder, []);
    byFolder.get(folder).push(strings.includes(file) ? `${name} (in a string)` : name);
  }
  return [...byFolder]
    .map(([folder, names]) => (folder ? `\`${folder}\` ${names.join(", ")}` : names.join(", ")))
    .join("; ");
}

/** docs/seed-ids.md with the last cell of every id and issue row recomputed; the other cells are kept. */
export function refreshedDoc(text, result = check()) {
  return text
    .split("\n")
    .map((line) => {
      const id = /^\|\s*(§9|(?:SP|[LRMCTGPS])\d+)\s*\|.*\|\s*[^|]*\|\s*$/.exec(line);
      const issue = /^\|\s*issue (\d+)\s*\|.*\|\s*[^|]*\|\s*$/.exec(line);
      const key = id ? id[1] : issue ? Number(issue[1]) : undefined;
      if (key === undefined) return line;
      const head = line.replace(/\|\s*[^|]*\|\s*$/, "|");
      return `${head} ${whereCell(key, result)} |`;
    })
    .join("\n");
}

function main(argv) {
  const result = check();
  const files = (set) => [...set].sort().join(", ");
  if (argv.includes("--json")) {
    const plain = (map) => Object.fromEntries([...map].map(([k, v]) => [k, [...v].sort()]));
    const { where, ...rest } = result;
    const out = {
      ...rest,
      where: { ids: plain(where.ids), visible: plain(where.visible), issues: plain(where.issues) },
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  }
  if (argv.includes("--write")) {
    const docPath = join(repoRoot, "docs", "seed-ids.md");
    writeFileSync(docPath, refreshedDoc(readFileSync(docPath, "utf8"), result));
    // The repository's formatter aligns markdown tables; `npm run lint` checks docs/ too.
    const biome = join(repoRoot, "node_modules", ".bin", "biome");
    const formatted = spawnSync(biome, ["format", "--write", docPath], { cwd: repoRoot, stdio: "ignore" });
    process.stdout.write(
      formatted.status === 0
        ? `refreshed ${relative(repoRoot, docPath)}\n`
        : `refreshed ${relative(repoRoot, docPath)}; now run: npx biome format --write docs/seed-ids.md\n`,
    );
    return 0;
  }
  if (argv.includes("--where")) {
    for (const id of result.cited) {
      const inComments = result.where.ids.get(id);
      const inStrings = result.where.visible.get(id);
      const parts = [];
      if (inComments) parts.push(files(inComments));
      if (inStrings) parts.push(`strings: ${files(inStrings)}`);
      process.stdout.write(`${id}: ${parts.join("; ")}\n`);
    }
    for (const n of result.issues) process.stdout.write(`issue ${n}: ${files(result.where.issues.get(n))}\n`);
    return 0;
  }
  const lines = [
    `${result.cited.length} ids cited in src/ (${result.cited.filter(isSeedId).length} real entries)`,
    `issues cited: ${result.issues.join(", ") || "none"}`,
  ];
  if (result.unknown.length) lines.push(`NOT inventory entries: ${result.unknown.join(", ")}`);
  if (result.undocumented.length)
    lines.push(`missing from docs/seed-ids.md: ${result.undocumented.join(", ")}`);
  if (result.undocumentedIssues.length)
    lines.push(`issues missing from docs/seed-ids.md: ${result.undocumentedIssues.join(", ")}`);
  if (result.documentedButNotReal.length)
    lines.push(`docs/seed-ids.md lists non-entries: ${result.documentedButNotReal.join(", ")}`);
  if (result.visible.length)
    lines.push(`ids inside strings (seen by a user or the model): ${result.visible.join(", ")}`);
  process.stdout.write(`${lines.join("\n")}\n`);
  const bad = result.unknown.length + result.undocumented.length + result.undocumentedIssues.length;
  return bad ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
