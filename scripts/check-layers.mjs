#!/usr/bin/env node
/**
 * The import-direction check: every relative import of src/ and web/ must follow the layers of
 * docs/architecture.md ("Layers and folders" and the paragraph under it). `LAYERS` is that table as edges;
 * change the doc and the table together.
 *
 * An edge is "from folder imports to folder" (the first folder under src/; `web` for web/; a file name for
 * the few files that are their own layer, like `model/catalog.ts`). A target written `folder:types` may be
 * imported only with `import type` (or `export type … from`, or `declare module`). Imports inside one
 * folder are always allowed.
 *
 * Run: `node scripts/check-layers.mjs` (part of `npm run lint`); exit status 1 and one line per violation.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Below the loop: what every plugin folder may import. */
const UNDER_PLUGINS = ["config", "hooks", "log", "model", "store", "tools", "loop"];
/** The plugin folders: they sit on the loop and never import one another. */
const PLUGINS = ["context", "planning", "guards", "retry", "subagents", "mcp", "telemetry", "tts"];
const UNDER_ENTRY_POINTS = [...UNDER_PLUGINS, ...PLUGINS, "presets", "transcript"];

/** Who may import whom, bottom to top. */
export const LAYERS = {
  log: [],
  hooks: [],
  // The preset table's provider names have one source; the catalog imports nothing but a type from log/.
  "model/catalog.ts": ["log:types"],
  config: ["model/catalog.ts"],
  model: ["log", "config"],
  store: ["log"],
  tools: ["hooks", "log", "model", "config", "store:types"],
  loop: ["hooks", "log", "model", "config", "store", "tools"],
  ...Object.fromEntries(PLUGINS.map((plugin) => [plugin, UNDER_PLUGINS])),
  presets: [...UNDER_PLUGINS, ...PLUGINS],
  transcript: ["log"],
  server: UNDER_ENTRY_POINTS,
  // `bdsh serve` mounts the server's plugin.
  cli: [...UNDER_ENTRY_POINTS, "server"],
  client: ["log:types"],
  // The library surface.
  "index.ts": UNDER_ENTRY_POINTS,
  // The dashboard's bundle: the transcript projection and the HTTP API's types.
  web: ["log", "transcript", "server/schemas.ts:types", "server/subagent-schemas.ts:types"],
};

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** A path as the table names it: `web` for the dashboard, else its path under src/. */
function tableName(path) {
  if (path.startsWith("web/")) return "web";
  return path.startsWith("src/") ? path.slice(4) : undefined;
}

/** The entry of LAYERS a file's imports are checked against: its own file entry, else its first folder. */
export function layerOf(path, layers = LAYERS) {
  const name = tableName(path);
  if (name === undefined || name in layers) return name;
  return name.split("/")[0];
}

/** Whether one import is allowed; `edge` is `{ from, to, typeOnly }` with repository-relative paths. */
export function allowed(edge, layers = LAYERS) {
  const from = layerOf(edge.from, layers);
  const to = tableName(edge.to);
  if (from === undefined || to === undefined) return true;
  // Inside one folder anything goes, unless the importer is a file with an entry of its own.
  if (!/\.tsx?$/.test(from) && from === to.split("/")[0]) return true;
  const rules = layers[from];
  if (rules === undefined) return false;
  return rules.some((rule) => {
    const [target, only] = rule.split(":");
    return (to === target || to.startsWith(`${target}/`)) && (only !== "types" || edge.typeOnly);
  });
}

/** Every edge that breaks the table, with a line saying why. */
export function violations(edges, layers = LAYERS) {
  return edges
    .filter((edge) => !allowed(edge, layers))
    .map((edge) => {
      const from = layerOf(edge.from, layers);
      const to = tableName(edge.to);
      const known = layers[from] === undefined ? ` (${from} is not in the layer table)` : "";
      return `${edge.from} imports ${edge.to}${edge.typeOnly ? " (types)" : ""}: ${from} → ${to} is not allowed${known}`;
    });
}

const IMPORT =
  /(?:^|[\n;])\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*["']([^"']+)["']|(?:^|[\n;])\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)|\bdeclare\s+module\s+["']([^"']+)["']/g;

/** The relative imports of one file's text (block and line comments removed first). */
export function importsOf(text) {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
  const out = [];
  for (const match of code.matchAll(IMPORT)) {
    const specifier = match[4] ?? match[5] ?? match[6] ?? match[7];
    if (!specifier?.startsWith(".")) continue;
    let typeOnly = match[7] !== undefined || match[2] !== undefined;
    const names = match[3];
    if (!typeOnly && names !== undefined) {
      const inner = /^\{([\s\S]*)\}$/.exec(names.trim());
      const specifiers = inner?.[1]
        ?.split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      typeOnly =
        specifiers !== undefined && specifiers.length > 0 && specifiers.every((s) => s.startsWith("type "));
    }
    out.push({ specifier, typeOnly });
  }
  return out;
}

function sourceFiles(directory) {
  const out = [];
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Every relative import of src/ and web/ as repository-relative `{ from, to, typeOnly }`. */
export function collectEdges(root = ROOT) {
  const edges = [];
  for (const file of [...sourceFiles(join(root, "src")), ...sourceFiles(join(root, "web"))]) {
    const from = relative(root, file).split(sep).join("/");
    for (const { specifier, typeOnly } of importsOf(readFileSync(file, "utf8"))) {
      const target = resolve(dirname(file), specifier).replace(/\.js$/, ".ts");
      const to = relative(root, target).split(sep).join("/");
      edges.push({ from, to: resolveExtension(root, to), typeOnly });
    }
  }
  return edges;
}

/** `x.js` in an import is `x.ts` or `x.tsx` on disk. */
function resolveExtension(root, path) {
  if (!path.endsWith(".ts")) return path;
  try {
    statSync(join(root, path));
    return path;
  } catch {
    return `${path}x`;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const found = violations(collectEdges());
  for (const line of found) console.error(line);
  if (found.length > 0) {
    console.error(`check-layers: ${found.length} import(s) against docs/architecture.md's layers`);
    process.exit(1);
  }
}
