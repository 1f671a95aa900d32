#!/usr/bin/env node
/**
 * Builds the web dashboard (issue 21): web/main.tsx → dist/dashboard/{index.html, assets/app-<hash>.js,
 * assets/app-<hash>.css}, minified, with Preact as the view library. Run by `npm run build`; the tests call
 * `buildDashboard()` so they always serve the current sources. src/server/dashboard.ts serves the result.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

const page = (script, style) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>better-dsh</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="./assets/${style}">
<script type="module" src="./assets/${script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The better-dsh dashboard needs JavaScript.</noscript>
</body>
</html>
`;

/** Builds into `outDir` (default dist/dashboard) and returns the names of the files it wrote. */
export async function buildDashboard(outDir = join(root, "dist", "dashboard")) {
  const assets = join(outDir, "assets");
  rmSync(outDir, { recursive: true, force: true });
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
    entryNames: "[name]-[hash]",
    metafile: true,
    legalComments: "none",
    logLevel: "warning",
    define: { "process.env.NODE_ENV": '"production"' },
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file));
  const script = outputs.find((name) => name.endsWith(".js"));
  const style = outputs.find((name) => name.endsWith(".css"));
  if (!script || !style)
    throw new Error(`the dashboard build made no script or no style: ${outputs.join(", ")}`);
  writeFileSync(join(outDir, "index.html"), page(script, style));
  return { outDir, script, style };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { outDir, script, style } = await buildDashboard();
  console.log(`dashboard: ${outDir} (${script}, ${style})`);
}
