/**
 * What one `bdsh` process costs the test suite: wall and CPU time of `--help`, `sessions list` and a
 * one-reply `run` (fake provider on loopback), started from the built `dist/` (what the tests run now)
 * and from the sources through tsx (what they ran before). Run `npm run build` first.
 *
 *   node --import tsx bench/suite/cli-start.ts            # 10 rounds each
 *   ROUNDS=20 node --import tsx bench/suite/cli-start.ts
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeProvider } from "../../testing/fake-provider/index.js";

const ROUNDS = Number(process.env.ROUNDS ?? 10);
const DIST = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const SRC = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;

const fake = await startFakeProvider({ script: () => ({ text: "done" }) });
const home = mkdtempSync(join(tmpdir(), "bdsh-bench-start-"));
const workspace = mkdtempSync(join(tmpdir(), "bdsh-bench-start-ws-"));
const env = {
  PATH: process.env.PATH,
  BDSH_HOME: home,
  BDSH_BASE_URL: fake.url,
  DEEPSEEK_API_KEY: "sk-bench",
};

type Sample = { wallMs: number; cpuMs: number };

/** CPU time of this process's finished children (cutime + cstime in /proc/self/stat), in ms. */
function childrenCpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100; // USER_HZ is 100 on Linux
}

/** One child's wall time and CPU time (spawned asynchronously: the fake provider answers in this process). */
async function once(argv: string[]): Promise<Sample> {
  const cpu0 = childrenCpuMs();
  const t0 = performance.now();
  const child = spawn(process.execPath, argv, { env, cwd: workspace, stdio: "ignore" });
  const status = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  const wallMs = performance.now() - t0;
  if (status !== 0) throw new Error(`${argv.join(" ")} exited ${status}`);
  return { wallMs, cpuMs: childrenCpuMs() - cpu0 };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const cases: Array<[string, string[]]> = [
  ["--help", ["--help"]],
  ["sessions list", ["sessions", "list"]],
  ["run (one reply)", ["run", "hello"]],
];
console.log(`bdsh start-up, ${ROUNDS} rounds each, median (Node ${process.version})`);
console.log("command            dist wall / cpu      tsx wall / cpu       cpu ratio tsx÷dist");
for (const [name, args] of cases) {
  const dist: Sample[] = [];
  const tsx: Sample[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    dist.push(await once([DIST, ...args]));
    tsx.push(await once(["--import", TSX, SRC, ...args]));
  }
  const d = { wall: median(dist.map((s) => s.wallMs)), cpu: median(dist.map((s) => s.cpuMs)) };
  const t = { wall: median(tsx.map((s) => s.wallMs)), cpu: median(tsx.map((s) => s.cpuMs)) };
  console.log(
    `${name.padEnd(18)} ${d.wall.toFixed(0).padStart(5)} / ${d.cpu.toFixed(0).padStart(5)} ms    ${t.wall
      .toFixed(0)
      .padStart(5)} / ${t.cpu.toFixed(0).padStart(5)} ms    ${(t.cpu / d.cpu).toFixed(2)}×`,
  );
}
await fake.close();
