/**
 * What starting one `bdsh` process costs: wall and CPU time of `--version`, `--help`, `sessions list`, a
 * one-reply `run` (fake provider on loopback) and `serve` until it listens (its CPU counts its stop too), for
 *
 * - `bundle`: the built binary, `dist/cli/main.js` (scripts/build-cli.mjs), what users and the tests run;
 * - `modules`: the same build's code as tsc wrote it, one file per module (what `dist/cli/main.js` was
 *   before the bundle), through an entry made for this run;
 * - `bundle, no cache`: on Node 22 and later, the binary with its compile cache off
 *   (`NODE_DISABLE_COMPILE_CACHE=1`);
 * - `base`: another build's `main.js` when `BASE_MAIN` names one (a before/after in one run);
 * - `pi`: pi's coding agent CLI (`@mariozechner/pi-coding-agent`, a devDependency), the TypeScript peer:
 *   `--version`, `--help`, and a one-reply `pi -p` against the same fake provider (`sessions list` has no
 *   counterpart there).
 *
 * Subjects alternate within each round, so a machine that slows down mid-run slows all of them. Each bdsh
 * subject has a home of its own that exists from the start, so on Node 22 and later `bundle` runs with its
 * compile cache (warm after its first run; `modules` and `base` start without one). Run `npm run build`
 * first; run it with another Node from a checkout whose native modules are built for it.
 *
 *   node --import tsx bench/suite/cli-start.ts              # 10 rounds each
 *   ROUNDS=20 BASE_MAIN=/path/to/old/dist/cli/main.js node --import tsx bench/suite/cli-start.ts
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import module from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startFakeProvider } from "../../testing/fake-provider/index.js";

const ROUNDS = Number(process.env.ROUNDS ?? 10);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUNDLE = join(ROOT, "dist/cli/main.js");
const PI = join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js");

const fake = await startFakeProvider({ script: () => ({ text: "done" }) });
const scratch = mkdtempSync(join(tmpdir(), "bdsh-bench-start-"));
const workspace = join(scratch, "workspace");
mkdirSync(workspace);

/** tsc's modules of this build behind an entry that does what src/cli/main.ts does. */
function modulesEntry(): string {
  const entry = join(scratch, "modules-main.mjs");
  const dist = (path: string) => pathToFileURL(join(ROOT, "dist/cli", path)).href;
  writeFileSync(
    entry,
    `import { endQuietlyOnBrokenPipe } from ${JSON.stringify(dist("output.js"))};\n` +
      `import { main } from ${JSON.stringify(dist("program.js"))};\n` +
      "endQuietlyOnBrokenPipe();\nprocess.exitCode = await main(process.argv.slice(2));\n",
  );
  return entry;
}

/** pi's agent folder: one custom OpenAI-compatible provider, the fake, as its default model. */
function piAgentDir(): string {
  const dir = join(scratch, "pi-agent");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "models.json"),
    JSON.stringify({
      providers: {
        fake: {
          baseUrl: `${fake.url}/v1`,
          api: "openai-completions",
          apiKey: "sk-bench",
          models: [{ id: "fake-model", name: "fake", contextWindow: 128000, maxTokens: 4096 }],
        },
      },
    }),
  );
  writeFileSync(
    join(dir, "settings.json"),
    JSON.stringify({ defaultProvider: "fake", defaultModel: "fake-model" }),
  );
  return dir;
}

type Subject = { name: string; argv: string[]; env: NodeJS.ProcessEnv; commands: Record<string, string[]> };

const bdshCommands = {
  "--version": ["--version"],
  "--help": ["--help"],
  "sessions list": ["sessions", "list"],
  "run (one reply)": ["run", "hello"],
  "serve (listening)": ["serve", "--port", "0", "--host", "127.0.0.1"],
};
/** A home that exists, as for anyone who has run bdsh before (the compile cache needs one: cli/compile-cache.ts). */
function bdshEnv(name: string): NodeJS.ProcessEnv {
  const home = join(scratch, `home-${name}`);
  mkdirSync(home, { mode: 0o700 });
  return { PATH: process.env.PATH, BDSH_HOME: home, BDSH_BASE_URL: fake.url, DEEPSEEK_API_KEY: "sk-bench" };
}
const subjects: Subject[] = [
  { name: "bundle", argv: [BUNDLE], env: bdshEnv("bundle"), commands: bdshCommands },
  { name: "modules", argv: [modulesEntry()], env: bdshEnv("modules"), commands: bdshCommands },
];
// Node 22 and later: the bundle without its compile cache too, to show what the cache is worth.
if (typeof (module as { enableCompileCache?: unknown }).enableCompileCache === "function")
  subjects.push({
    name: "bundle, no cache",
    argv: [BUNDLE],
    env: { ...bdshEnv("bundle-uncached"), NODE_DISABLE_COMPILE_CACHE: "1" },
    commands: bdshCommands,
  });
if (process.env.BASE_MAIN)
  subjects.push({
    name: "base",
    argv: [process.env.BASE_MAIN],
    env: bdshEnv("base"),
    commands: bdshCommands,
  });
if (existsSync(PI))
  subjects.push({
    name: "pi",
    argv: [PI],
    env: { PATH: process.env.PATH, HOME: join(scratch, "pi-home"), PI_CODING_AGENT_DIR: piAgentDir() },
    commands: {
      "--version": ["--version"],
      "--help": ["--help"],
      "run (one reply)": ["-p", "--no-session", "hello"],
    },
  });

type Sample = { wallMs: number; cpuMs: number };

/** CPU time of this process's finished children (cutime + cstime in /proc/self/stat), in ms. */
function childrenCpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100; // USER_HZ is 100 on Linux
}

/** `bdsh serve` is measured until it says it listens; then it is stopped (its CPU includes the stop). */
const LISTENING = /serving on http/;

/**
 * One child's wall time and CPU time (spawned asynchronously: the fake provider answers in this process).
 * A server's wall time ends when it is listening.
 */
async function once(argv: string[], env: NodeJS.ProcessEnv): Promise<Sample> {
  const cpu0 = childrenCpuMs();
  const t0 = performance.now();
  const child = spawn(process.execPath, argv, { env, cwd: workspace, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  let listeningMs: number | undefined;
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    if (listeningMs === undefined && LISTENING.test(stderr)) {
      listeningMs = performance.now() - t0;
      child.kill("SIGTERM");
    }
  });
  const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const wallMs = listeningMs ?? performance.now() - t0;
  if (status !== 0 && listeningMs === undefined)
    throw new Error(`${argv.join(" ")} exited ${status}: ${stderr}`);
  return { wallMs, cpuMs: childrenCpuMs() - cpu0 };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const cell = (s: { wall: number; cpu: number } | undefined) =>
  s ? `${s.wall.toFixed(0).padStart(8)} / ${s.cpu.toFixed(0).padStart(5)}` : "              -";

console.log(`start-up, ${ROUNDS} rounds, median wall / CPU in ms (Node ${process.version})`);
console.log(`${"command".padEnd(17)} ${subjects.map((s) => s.name.padStart(16)).join(" ")}   CPU ÷ bundle`);
for (const command of Object.keys(bdshCommands)) {
  const samples = new Map<string, Sample[]>(subjects.map((s) => [s.name, []]));
  for (let round = 0; round < ROUNDS; round++)
    for (const subject of subjects) {
      const args = subject.commands[command];
      if (args) samples.get(subject.name)!.push(await once([...subject.argv, ...args], subject.env));
    }
  const medians = subjects.map((subject) => {
    const list = samples.get(subject.name)!;
    return list.length === 0
      ? undefined
      : { wall: median(list.map((s) => s.wallMs)), cpu: median(list.map((s) => s.cpuMs)) };
  });
  const bundle = medians[0]!;
  const ratios = medians
    .slice(1)
    .map((m, i) => (m ? `${subjects[i + 1]!.name} ${(m.cpu / bundle.cpu).toFixed(2)}×` : ""))
    .filter(Boolean);
  console.log(`${command.padEnd(17)} ${medians.map(cell).join(" ")}   ${ratios.join(", ")}`);
}
await fake.close();
