/**
 * The child-process fixtures (`test/<area>/fixtures/*.ts`) compiled once per run, in the global setup, so a
 * test starts them with plain `node` instead of through the tsx loader (about a second more CPU per process,
 * some forty processes a run). Each fixture becomes one ESM file; its imports of `src/` point at the matching
 * module in `dist/` (the same build the CLI tests start, so a fixture and `bdsh` never run different code and
 * `import.meta.url` inside the harness keeps finding its assets), and npm packages stay external.
 */
import { readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";

function fixtureSources(testRoot: string): string[] {
  const found: string[] = [];
  for (const area of readdirSync(testRoot, { withFileTypes: true })) {
    if (!area.isDirectory()) continue;
    const dir = join(testRoot, area.name, "fixtures");
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) if (name.endsWith(".ts")) found.push(join(dir, name));
  }
  return found;
}

/** Resolves `…/src/x.js` imports to `dist/x.js` and leaves them external. */
function sourcesFromDist(root: string): Plugin {
  const src = join(root, "src");
  return {
    name: "sources-from-dist",
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        const target = resolve(dirname(args.importer), args.path);
        if (!target.startsWith(`${src}/`)) return undefined;
        const built = join(root, "dist", relative(src, target)).replace(/\.ts$/, ".js");
        return { path: pathToFileURL(built).href, external: true };
      });
    },
  };
}

/** Compiles every fixture into `outDir`; returns source path → compiled path. */
export async function buildFixtures(root: string, outDir: string): Promise<Record<string, string>> {
  const compiled: Record<string, string> = {};
  const sources = fixtureSources(join(root, "test"));
  await Promise.all(
    sources.map(async (source) => {
      const outfile = join(outDir, `${relative(join(root, "test"), source).replaceAll("/", "__")}.mjs`);
      await build({
        entryPoints: [source],
        outfile,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        packages: "external",
        plugins: [sourcesFromDist(root)],
        logLevel: "error",
      });
      compiled[source] = outfile;
    }),
  );
  return compiled;
}
