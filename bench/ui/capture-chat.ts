/**
 * Regenerates docs/screens/chat.txt (issue 15): `bdsh chat` in a real terminal (tmux, 120 × 50) against the
 * scripted fake provider, a small coding session typed as a person would — a todo checklist, the tests
 * (failing), a read and an edit with its diff, the tests again, then a dangerous command that opens the
 * approval prompt (captured while it is open), denied, and the markdown answer with the status line's
 * tokens and cost. Two captures: the approval prompt, and the screen after the reply.
 *
 *   node --import tsx bench/ui/capture-chat.ts [OUT]     (default docs/screens/chat.txt; needs tmux)
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { TmuxSession } from "../../test/support/tmux.js";
import { startFakeProvider } from "../../testing/fake-provider/index.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OUT = process.argv[2] ?? join(ROOT, "docs", "screens", "chat.txt");
// A fixed workspace path, so the capture does not change with a random temp name.
const WORK = "/tmp/bdsh-chat-demo";
const LOADER = new URL("node_modules/tsx/dist/loader.mjs", `file://${ROOT}`).href;

const ANSWER = `## Fixed: \`add\` subtracted

\`src/add.js\` returned \`a - b\`; it now returns \`a + b\`, and \`node test.js\` prints **ok**.

- I did **not** delete \`build/\`: you declined, so it is still there.
- Nothing else changed.
`;

function plain(screen: string): string {
  return screen
    .replace(/\s+$/, "")
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n");
}

async function main(): Promise<void> {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(join(WORK, "src"), { recursive: true });
  mkdirSync(join(WORK, "build"));
  writeFileSync(join(WORK, "src", "add.js"), "export function add(a, b) {\n  return a - b;\n}\n");
  writeFileSync(
    join(WORK, "test.js"),
    'import { add } from "./src/add.js";\nif (add(2, 3) !== 5) { console.error("add is broken"); process.exit(1); }\nconsole.log("ok");\n',
  );
  writeFileSync(join(WORK, "package.json"), '{ "type": "module" }\n');
  execFileSync("git", ["init", "-q"], { cwd: WORK });
  const file = join(WORK, "src", "add.js");
  const usage = { input: 2400, cacheRead: 1800, output: 160 };
  const todos = (done: number) => ({
    todos: ["Run the tests", "Fix add()"].map((content, i) => ({
      content,
      status: i < done ? "completed" : i === done ? "in_progress" : "pending",
    })),
  });
  const fake = await startFakeProvider({
    script: [
      {
        reasoning: "Plan the steps, then run the tests to see what fails.",
        toolCalls: [{ id: "t1", name: "todo_write", arguments: todos(0) }],
        usage,
      },
      {
        toolCalls: [
          { id: "c1", name: "bash", arguments: { description: "Run the tests", command: "node test.js" } },
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
          { id: "t2", name: "todo_write", arguments: todos(2) },
          {
            id: "c5",
            name: "bash",
            arguments: { description: "Clean the build folder", command: "rm -rf build" },
          },
        ],
        usage,
      },
      { text: ANSWER, chunkSize: 12, frameDelayMs: 15, usage: { input: 2600, cacheRead: 2200, output: 240 } },
    ],
  });
  const home = mkdtempSync(join(tmpdir(), "bdsh-capture-home-"));
  const tui = TmuxSession.start(
    [process.execPath, "--import", LOADER, join(ROOT, "src", "cli", "main.ts"), "chat", "--approval", "ask"],
    {
      cwd: WORK,
      env: { BDSH_HOME: home, BDSH_BASE_URL: fake.url, DEEPSEEK_API_KEY: "sk-demo" },
      columns: 120,
      rows: 50,
    },
  );
  try {
    await tui.waitForText("/help for commands", 30_000);
    tui.type("the tests fail; fix it and clean up the build folder");
    tui.keys("Enter");
    const approval = await tui.waitForText("[n] deny", 60_000);
    tui.type("n");
    await tui.waitForText("Nothing else changed.", 60_000);
    await tui.waitFor((s) => !s.includes("Esc to interrupt"), "the turn to end", 30_000);
    const after = tui.screen();
    mkdirSync(dirname(OUT), { recursive: true });
    writeFileSync(
      OUT,
      [
        '$ bdsh chat --approval ask        # typed: "the tests fail; fix it and clean up the build folder"',
        "",
        "── the approval prompt, open (the answer key goes to the prompt, never to the model or the editor) ──",
        plain(approval),
        "",
        "── after answering n: the reply, and the editor ready for the next message ──",
        plain(after),
        "",
      ].join("\n"),
    );
    console.log(`wrote ${OUT}`);
  } finally {
    tui.kill();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
