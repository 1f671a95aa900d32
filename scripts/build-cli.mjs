#!/usr/bin/env node
/**
 * Bundles the `bdsh` binary: tsc's `dist/cli/main.js` and everything it imports from `dist/` become
 * `dist/cli/main.js` plus shared chunks under `dist/cli/chunks/`. Run by `npm run build`, after tsc.
 *
 * Why: Node's ES module loader pays per file, and `bdsh --version` loaded about 800 of them (290 of ours,
 * 370 of typebox's, 95 of zod's) before doing anything: 0.6 s of a one-reply `bdsh run`'s 0.75 s.
 * `bench/suite/cli-start.ts` measures the difference.
 *
 * - The library (`dist/index.js` and the other files tsc wrote) stays as it is, one file per module, for
 *   programs that import `better-dsh`.
 * - Code splitting keeps what was loaded on demand (`bdsh serve`'s server, the chat TUI, the MCP SDK) in
 *   chunks of their own, loaded only when used.
 * - Inlined: the pure ES module packages of many small files, where the loader's cost per file dominates.
 *   Every other package stays an import of `node_modules`: native ones (better-sqlite3, tree-sitter), and
 *   CommonJS ones, which an ES module bundle could only inline with a `require` shim.
 * - No `keepNames`: it wraps every function and arrow function in a `__name` call that defines an own
 *   `name` property, so each closure an agent makes costs more memory and time (about 110 KB more per
 *   served session). Instead the build fails if the bundle renamed a class (two of one name in different
 *   modules): error classes name themselves from `new.target.name`, which people read.
 * - Chunks sit one folder deeper than `main.js`, so code that finds files beside itself goes through
 *   `packageInfo()` (src/config/package-root.ts), not a fixed number of `../`.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cliDir = join(root, "dist", "cli");

/** Packages compiled into the bundle: ES modules spread over many files (the rest stay external). */
export const INLINED_PACKAGES = ["typebox", "zod", "uuid"];

/** The package a bare import names: `@scope/name` or `name`, from `@scope/name/sub` or `name/sub`. */
function packageOf(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Every bare import not in INLINED_PACKAGES is left to Node's resolution at run time. */
const externalPackages = {
  name: "external-packages",
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:")) return { path: args.path, external: true };
      return INLINED_PACKAGES.includes(packageOf(args.path))
        ? undefined
        : { path: args.path, external: true };
    });
  },
};

export async function buildCli() {
  const entry = join(cliDir, "main.js");
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run tsc (npm run build) first`);
  rmSync(join(cliDir, "chunks"), { recursive: true, force: true });
  await build({
    entryPoints: [entry],
    outdir: cliDir,
    entryNames: "[name]",
    chunkNames: "chunks/[name]-[hash]",
    allowOverwrite: true,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "linked",
    plugins: [externalPackages],
    logLevel: "warning",
  });
  const renamed = renamedClasses(cliDir);
  if (renamed.length > 0)
    throw new Error(`the bundle renamed classes (two of one name?): ${renamed.join(", ")}`);
}

/**
 * Classes esbuild renamed to keep two of one name apart: `var Foo2 = class` beside `var Foo = class`, in the
 * bundle's files.
 */
export function renamedClasses(dir) {
  const files = ["main.js", ...readdirSync(join(dir, "chunks")).map((name) => join("chunks", name))];
  const names = new Set(
    files
      .filter((file) => file.endsWith(".js"))
      .flatMap((file) => [...readFileSync(join(dir, file), "utf8").matchAll(/\bvar (\w+) = class\b/g)])
      .map((match) => match[1]),
  );
  return [...names].filter((name) => /\d$/.test(name) && names.has(name.replace(/\d+$/, "")));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildCli();
