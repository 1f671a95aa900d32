// better-sqlite3 publishes its prebuilt binaries on GitHub, which CI cannot reach, so `npm ci` compiles it
// (minutes on 2 cores). prebuild-install looks in npm's cache before downloading: after a build, store the
// binary there under the exact name prebuild-install derives from its download URL, so later runs of
// .ci/run on this machine install it in seconds. Idempotent; does nothing when the entry exists.
const { execFileSync } = require("node:child_process");
const { existsSync, mkdirSync } = require("node:fs");
const { dirname, join } = require("node:path");
const util = require("prebuild-install/util");

const moduleDir = dirname(require.resolve("better-sqlite3/package.json"));
const pkg = require(join(moduleDir, "package.json"));
const url = util.getDownloadUrl({
  pkg,
  runtime: "node",
  abi: process.versions.modules,
  platform: process.platform,
  arch: process.arch,
  libc: "",
  "tag-prefix": "v",
});
const cached = util.cachedPrebuild(url);
const binary = join(moduleDir, "build", "Release", "better_sqlite3.node");
if (existsSync(cached)) {
  console.log(`better-sqlite3 prebuild cached: ${cached}`);
} else if (existsSync(binary)) {
  mkdirSync(dirname(cached), { recursive: true });
  execFileSync("tar", ["-czf", cached, "-C", moduleDir, "build/Release/better_sqlite3.node"]);
  console.log(`better-sqlite3 prebuild stored: ${cached}`);
}
