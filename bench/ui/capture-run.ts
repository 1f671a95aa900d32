/**
 * Regenerates docs/screens/run.txt (issue 15): `bdsh run` in a real terminal (tmux, 120 columns) against
 * the scripted fake provider doing a small coding session — a bash call with output, a read and an edit
 * with its diff, the tests, a failing command (`exit 3`), then a markdown answer — captured as plain text
 * with `tmux capture-pane -p`, end summary included.
 *
 *   node --import tsx bench/ui/capture-run.ts [OUT]     (default docs/screens/run.txt; needs tmux)
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeProvider } from "../../testing/fake-provider/index.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OUT = process.argv[2] ?? join(ROOT, "docs", "screens", "run.txt");
const SESSION = `bdsh-capture-${process.pid}`;
// A fixed workspace path, so the capture does not change with a random temp name.
const WORK = "/tmp/bdsh-demo";

const ANSWER = `## Fixed: \`add\` subtracted

The bug was in \`src/add.js\`: it returned \`a - b\`.

- changed it to \`a + b\`
- \`node test.js\` now prints **ok**

\`\`\`js
export function add(a, b) {
  return a + b;
}
\`\`\`

> \`npm run lint\` failed with exit 3 (no lint script here); nothing else to do.
`;

function tmux(...args: string[]): string {
  return execFileSync("tmux", args, { encoding: "utf8" });
}

async function main(): Promise<void> {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(join(WORK, "src"), { recursive: true });
  writeFileSync(join(WORK, "src", "add.js"), "export function add(a, b) {\n  return a - b;\n}\n");
  writeFileSync(
    join(WORK, "test.js"),
    'import { add } from "./src/add.js";\nif (add(2, 3) !== 5) { console.error("add is broken"); process.exit(1); }\nconsole.log("ok");\n',
  );
  writeFileSync(join(WORK, "package.json"), '{ "type": "module" }\n');
  execFileSync("git", ["init", "-q"], { cwd: WORK });
  const file = join(WORK, "src", "add.js");
  const usage = { input: 2400, cacheRead: 1800, output: 160 };
  const fake = await startFakeProvider({
    script: [
      {
        reasoning: "Run the tests first to see what fails.",
        toolCalls: [
          {
            id: "c1",
            name: "bash",
            arguments: { description: "Run the tests", command: "ls src; node test.js" },
          },
        ],
        usage,
      },
      { toolCalls: [{ id: "c2", name: "read", arguments: { file_path: file } }], usage },
      {
        toolCalls: [
          {
            id: "c3",
            name: "edit",
            arguments: { file_path: file, old_string: "a - b", new_string: "a + b" },
          },
        ],
        usage,
      },
      {
        toolCalls: [
          { id: "c4", name: "bash", arguments: { description: "Run the tests", command: "node test.js" } },
        ],
        usage,
      },
      {
        toolCalls: [
          {
            id: "c5",
            name: "bash",
            arguments: { description: "Lint", command: "echo 'no lint script' >&2; exit 3" },
          },
        ],
        usage,
      },
      { text: ANSWER, chunkSize: 12, frameDelayMs: 15, usage: { input: 2600, cacheRead: 2200, output: 240 } },
    ],
  });
  const home = mkdtempSync(join(tmpdir(), "bdsh-capture-home-"));
  const env = [
    `BDSH_HOME=${home}`,
    `BDSH_BASE_URL=${fake.url}`,
    "DEEPSEEK_API_KEY=sk-demo",
    "TERM=xterm-256color",
  ];
  const cli = `node --import ${new URL("node_modules/tsx/dist/loader.mjs", `file://${ROOT}`).href} ${join(ROOT, "src", "cli", "main.ts")}`;
  const command = `cd ${WORK} && env ${env.join(" ")} ${cli} run --approval never "fix the failing test"; echo "[exit $?]"; sleep 600`;
  tmux("new-session", "-d", "-s", SESSION, "-x", "120", "-y", "70", command);
  try {
    const deadline = Date.now() + 60_000;
    let screen = "";
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      screen = tmux("capture-pane", "-p", "-t", SESSION, "-S", "-200");
      if (screen.includes("[exit ")) break;
    }
    if (!screen.includes("[exit ")) throw new Error(`the run did not end:\n${screen}`);
    const lines = screen
      .replace(/\s+$/, "")
      .split("\n")
      .map((line) => line.trimEnd());
    mkdirSync(dirname(OUT), { recursive: true });
    writeFileSync(OUT, `$ bdsh run --approval never "fix the failing test"\n${lines.join("\n")}\n`);
    console.log(`wrote ${OUT} (${lines.length} lines)`);
  } finally {
    tmux("kill-session", "-t", SESSION);
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
