#!/usr/bin/env node
/**
 * The vitest part of `npm test`, on every Node version we test: the whole suite on the Node running this
 * script (the one that ran `npm ci`; 20 in CI), then on each pinned other version (node-versions.mjs gets
 * it from the npm registry and builds the native modules for it, both cached) every test file except those
 * in `.ci/full-suite-only.txt` (the expensive end-to-end files, which three times over do not fit CI's
 * time on 2 cores), with vitest's `--no-isolate`. Arguments go to every vitest run. Exits non-zero when
 * any run failed; every run is made and the summary names each.
 *
 * `BDSH_TEST_NODES` overrides the other versions: a comma-separated list, or `none` for this Node only.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { prepareVersion } from "./node-versions.mjs";

/** Exact versions, so the cache (runtime and native builds) is hit on every later run. */
const OTHER_VERSIONS = ["22.23.5", "24.22.3"];

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);

function otherVersions() {
  const raw = process.env.BDSH_TEST_NODES;
  if (raw === undefined) return OTHER_VERSIONS;
  if (raw.trim() === "none") return [];
  return raw
    .split(",")
    .map((v) => v.trim().replace(/^v/, ""))
    .filter(Boolean);
}

function fullSuiteOnly() {
  return readFileSync(join(root, ".ci", "full-suite-only.txt"), "utf8")
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter(Boolean);
}

function vitest(node, cwd, extra, env = process.env) {
  const started = Date.now();
  const result = spawnSync(
    node,
    [join(cwd, "node_modules", "vitest", "vitest.mjs"), "run", ...extra, ...args],
    {
      cwd,
      env,
      stdio: "inherit",
    },
  );
  return { ok: result.status === 0, seconds: Math.round((Date.now() - started) / 1000) };
}

const results = [];
const filtered = args.length > 0 ? ` (vitest ${args.join(" ")})` : "";
const header = (text) => process.stdout.write(`\n=== ${text} ===\n\n`);

header(`Node ${process.version}: the whole suite`);
results.push({
  what: `Node ${process.version}, whole suite${filtered}`,
  ...vitest(process.execPath, root, []),
});

const skipped = fullSuiteOnly();
for (const version of otherVersions()) {
  header(`Node v${version}: the suite less the ${skipped.length} files in .ci/full-suite-only.txt`);
  let prepared;
  try {
    prepared = prepareVersion(root, version);
  } catch (error) {
    process.stderr.write(
      `could not prepare Node ${version}: ${error instanceof Error ? error.message : error}\n`,
    );
    results.push({ what: `Node v${version}, not prepared`, ok: false, seconds: 0 });
    continue;
  }
  const env = { ...process.env, PATH: `${dirname(prepared.binary)}:${process.env.PATH}` };
  // --no-isolate: each worker imports the sources once instead of once per file, which took most of this
  // run's CPU (the files left here are in-process ones). The isolated run is the whole suite above.
  const excludes = ["--no-isolate", ...skipped.flatMap((file) => ["--exclude", file])];
  results.push({
    what: `Node v${version}, suite less .ci/full-suite-only.txt${filtered}`,
    ...vitest(prepared.binary, prepared.tree, excludes, env),
  });
}

process.stdout.write("\n");
for (const r of results) process.stdout.write(`${r.ok ? "passed" : "FAILED"}  ${r.what} (${r.seconds} s)\n`);
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
