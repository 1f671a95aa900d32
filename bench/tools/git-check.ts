/**
 * Cost of the git control-path protection per command (issue 30 item 3), on a 20,000-file workspace:
 * - the after-command check as the git-repair plugin runs it: one snapshot before, one after and the
 *   comparison (nothing changed, the common case), p50/p99;
 * - the same when the command left a new repository with `core.fsmonitor` (a repair with git's help);
 * - the discovery the sandbox does for its read-only binds (`protectedPaths`);
 * - beside them, what a command costs anyway: `bwrap … true` with the same binds, and a plain `sh -c true`.
 *
 *   node --import tsx bench/tools/git-check.ts
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { repairGitControl, snapshotGitControl } from "../../src/guards/git-repair/git-control-check.js";
import { protectedPaths } from "../../src/tools/files/protected-paths.js";
import {
  bubblewrapArgs,
  bubblewrapAvailable,
  releaseMountPoints,
} from "../../src/tools/terminal/bubblewrap.js";

const FILES = 20_000;
const ROUNDS = 40;
const workspace = realpathSync(mkdtempSync(join(tmpdir(), "bdsh-gitbench-")));
const gitEnv = { PATH: process.env.PATH, HOME: workspace, GIT_CONFIG_NOSYSTEM: "1" };
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, env: gitEnv, stdio: "ignore" });

// 16,000 source files in 800 directories (three deep), 4,000 in node_modules, three nested repositories.
git(workspace, "init", "-q");
for (let d = 0; d < 800; d += 1) {
  const dir = join(workspace, "src", `m${d % 20}`, `p${Math.floor(d / 20) % 10}`, `d${d}`);
  mkdirSync(dir, { recursive: true });
  for (let f = 0; f < 20; f += 1) writeFileSync(join(dir, `f${f}.ts`), "x\n");
}
for (let d = 0; d < 200; d += 1) {
  const dir = join(workspace, "node_modules", `pkg${d}`, "lib");
  mkdirSync(dir, { recursive: true });
  for (let f = 0; f < 20; f += 1) writeFileSync(join(dir, `f${f}.js`), "x\n");
}
for (const nested of ["vendor/a", "vendor/b", "node_modules/pkg7"]) {
  mkdirSync(join(workspace, nested), { recursive: true });
  git(join(workspace, nested), "init", "-q");
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};
const time = (body: () => void): number[] => {
  body(); // warm the directory cache
  const out: number[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const start = performance.now();
    body();
    out.push(performance.now() - start);
  }
  return out;
};
const rows: [string, number[]][] = [];

rows.push([
  "after-command check, nothing changed (snapshot before + after + compare)",
  time(() => {
    const before = snapshotGitControl(workspace);
    repairGitControl(before.workspace, before, snapshotGitControl(workspace));
  }),
]);
rows.push([
  "after-command check, a new repository with core.fsmonitor repaired",
  time(() => {
    const before = snapshotGitControl(workspace);
    const fresh = join(workspace, "src", "fresh");
    rmSync(fresh, { recursive: true, force: true });
    mkdirSync(fresh);
    git(fresh, "init", "-q");
    git(fresh, "config", "core.fsmonitor", "touch /nonexistent");
    repairGitControl(before.workspace, before, snapshotGitControl(workspace));
  }),
]);
rows.push(["sandbox binds: protectedPaths (discovery walk)", time(() => protectedPaths(workspace))]);
if (bubblewrapAvailable()) {
  rows.push([
    "a command anyway: bwrap with those binds, running true",
    time(() => {
      const { args, mountPoints } = bubblewrapArgs({ mode: "workspace-write", workspace }, workspace);
      spawnSync("bwrap", [...args, "--", "true"], { stdio: "ignore" });
      releaseMountPoints(mountPoints);
    }),
  ]);
}
rows.push(["a command anyway: sh -c true", time(() => spawnSync("sh", ["-c", "true"], { stdio: "ignore" }))]);

const count = Number(
  execFileSync("sh", ["-c", `find ${workspace} -type f | wc -l`])
    .toString()
    .trim(),
);
console.log(
  `workspace: ${count} files (${FILES} planned + git's own), ${ROUNDS} rounds, load ${loadavg()[0]?.toFixed(2)}`,
);
console.log("| measured | p50 | p99 |\n| --- | ---: | ---: |");
for (const [name, values] of rows)
  console.log(
    `| ${name} | ${percentile(values, 50).toFixed(1)} ms | ${percentile(values, 99).toFixed(1)} ms |`,
  );
rmSync(workspace, { recursive: true, force: true });
