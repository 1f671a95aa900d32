#!/usr/bin/env node
/**
 * Builds the web dashboard: web/main.tsx → dist/dashboard/{index.html, assets/app-<hash>.js,
 * assets/app-<hash>.css}, minified, with Preact as the view library. Run by `npm run build`; the tests call
 * `buildDashboard()` so they always serve the current sources. src/server/dashboard.ts serves the result.
 */
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

const page = (script, style, preloads) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>better-dsh</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="./assets/${style}">
${preloads.map((chunk) => `<link rel="modulepreload" href="./assets/${chunk}">\n`).join("")}<script type="module" src="./assets/${script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The better-dsh dashboard needs JavaScript.</noscript>
</body>
</html>
`;

/** Builds into `outDir` (default dist/dashboard) and returns the names of the files it wrote. */
export async function buildDashboard(outDir = join(root, "dist", "dashboard")) {
  // Built beside the folder and swapped in, so a server reading the folder never sees it half written.
  const finalDir = outDir;
  outDir = `${finalDir}.build-${process.pid}-${Date.now()}`;
  const assets = join(outDir, "assets");
  mkdirSync(assets, { recursive: true });
  const result = await build({
    entryPoints: { app: join(root, "web", "main.tsx") },
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2022", "chrome110", "firefox115", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    outdir: assets,
    // The session view (Markdown, the highlighter, the event feed) is its own chunk, loaded when a session is
    // opened: the list page parses only what it draws, which keeps the first view short.
    splitting: true,
    entryNames: "[name]-[hash]",
    chunkNames: "[name]-[hash]",
    metafile: true,
    legalComments: "none",
    logLevel: "warning",
    define: { "process.env.NODE_ENV": '"production"' },
  });
  const entries = Object.entries(result.metafile.outputs);
  const outputs = entries.map(([file]) => basename(file));
  // The page loads the entry; the other scripts are chunks it imports by relative URL.
  const entry = entries.find(([file, output]) => file.endsWith(".js") && output.entryPoint);
  const script = entry ? basename(entry[0]) : undefined;
  const style = outputs.find((name) => name.endsWith(".css"));
  // What the entry imports statically is fetched beside it, not after it has been parsed.
  const preloads = (entry?.[1].imports ?? [])
    .filter((imported) => imported.kind === "import-statement")
    .map((imported) => basename(imported.path));
  if (!script || !style)
    throw new Error(`the dashboard build made no script or no style: ${outputs.join(", ")}`);
  writeFileSync(join(outDir, "index.html"), page(script, style, preloads));
  const old = `${outDir}.old`;
  if (existsSync(finalDir)) renameSync(finalDir, old);
  renameSync(outDir, finalDir);
  rmSync(old, { recursive: true, force: true });
  return { outDir: finalDir, script, style, preloads };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { outDir, script, style } = await buildDashboard();
  console.log(`dashboard: ${outDir} (${script}, ${style})`);
}
