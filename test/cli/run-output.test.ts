/**
 * Issue 15 item 2, end to end: `bdsh run`'s scriptable output (`--quiet`, `--output-last-message`), piped
 * stdout left as the model wrote it, NO_COLOR/FORCE_COLOR on stderr's tool cards, a failing command shown
 * as a failure, the end summary naming the session, and EPIPE ending quietly. The real CLI in a child
 * process, a temp BDSH_HOME and workspace, the scripted provider at the network edge; SQLite then
 * PostgreSQL where a stored session is read back.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
import { BDSH_MAIN, runCli } from "../support/run-cli.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point
const ANSI = /\u001b\[/;

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const stores: Array<[string, () => NodeJS.ProcessEnv]> = [
  ["SQLite", () => ({})],
  ["PostgreSQL", () => ({ DATABASE_URL: testDatabaseUrl() })],
];

const failingTool = {
  toolCalls: [{ id: "b1", name: "bash", arguments: { description: "Fail on purpose", command: "exit 3" } }],
};

for (const [name, storeEnv] of stores) {
  describe(`bdsh run output (${name})`, () => {
    function setup(url: string): { env: NodeJS.ProcessEnv; work: string } {
      const home = mkdtempSync(join(tmpdir(), "bdsh-out-"));
      const work = mkdtempSync(join(tmpdir(), "bdsh-out-work-"));
      return {
        env: { BDSH_HOME: home, BDSH_BASE_URL: url, DEEPSEEK_API_KEY: "sk-test-out", ...storeEnv() },
        work,
      };
    }

    it("--quiet: stdout is exactly the final answer; stderr has no tool card or summary", async () => {
      fake = await startFakeProvider({
        script: [
          {
            text: "Let me look.",
            toolCalls: [{ id: "e1", name: "bash", arguments: { command: "echo hi" } }],
          },
          { text: "The answer is 42." },
        ],
      });
      const { env, work } = setup(fake.url);
      const result = await runCli(["run", "--quiet", "what is it?"], env, work);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("The answer is 42.\n");
      expect(result.stderr).not.toContain("echo hi");
      expect(result.stderr).not.toMatch(/session \S+/);
      expect(result.stderr).not.toContain("continue");
    });

    it("--output-last-message FILE holds the final answer; stdout keeps the normal output", async () => {
      fake = await startFakeProvider({ script: [{ text: "Final words." }] });
      const { env, work } = setup(fake.url);
      const file = join(work, "last.txt");
      const result = await runCli(["run", "--output-last-message", file, "speak"], env, work);
      expect(result.code).toBe(0);
      expect(readFileSync(file, "utf8").trim()).toBe("Final words.");
      expect(result.stdout).toBe("Final words.\n");
    });

    it("piped stdout is the reply as written (markdown raw, no ANSI)", async () => {
      const reply = "# Title\n\n**bold** and `code`\n\n- item";
      fake = await startFakeProvider({ script: [{ text: reply }] });
      const { env, work } = setup(fake.url);
      const result = await runCli(["run", "format"], { ...env, FORCE_COLOR: "1" }, work);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`${reply}\n`);
      expect(result.stdout).not.toMatch(ANSI);
    });

    it("FORCE_COLOR=1 colours stderr's tool cards, NO_COLOR=1 does not", async () => {
      fake = await startFakeProvider({
        script: [failingTool, { text: "done" }, failingTool, { text: "done" }],
      });
      const { env, work } = setup(fake.url);
      const forced = await runCli(["run", "go"], { ...env, FORCE_COLOR: "1" }, work);
      expect(forced.stderr).toContain("exit 3");
      expect(forced.stderr).toMatch(ANSI);
      const plain = await runCli(["run", "go"], { ...env, NO_COLOR: "1", FORCE_COLOR: "1" }, work);
      expect(plain.stderr).toContain("exit 3");
      expect(plain.stderr).not.toMatch(ANSI);
    });

    it("a failing command (exit 3) shows as a failure naming the exit code", async () => {
      fake = await startFakeProvider({ script: [failingTool, { text: "it failed" }] });
      const { env, work } = setup(fake.url);
      const result = await runCli(["run", "try it"], { ...env, NO_COLOR: "1" }, work);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain("✗");
      expect(result.stderr).toContain("exit 3");
      expect(result.stderr).not.toContain("✓");
    });

    it("the end summary on stderr names the session id and how to continue it", async () => {
      fake = await startFakeProvider({ script: [{ text: "ok" }, { text: "ok" }] });
      const { env, work } = setup(fake.url);
      const json = await runCli(["run", "--json", "hi"], env, work);
      const first = (JSON.parse(json.stdout.split("\n")[0]!) as LogEvent).sessionId;
      const result = await runCli(["run", "--session", first, "again"], env, work);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(`session ${first.slice(-8)}`); // its short id
      expect(result.stderr).toContain(`continue: bdsh run --session ${first.slice(-8)}`);
    });

    it("`sessions events ID | head -1` ends without an EPIPE stack trace", async () => {
      const script = Array.from({ length: 3 }, (_, i) => ({ text: `reply ${i} ${"x".repeat(2000)}` }));
      fake = await startFakeProvider({ script });
      const { env, work } = setup(fake.url);
      const json = await runCli(["run", "--json", "one"], env, work);
      const id = (JSON.parse(json.stdout.split("\n")[0]!) as LogEvent).sessionId;
      await runCli(["run", "--session", id, "two"], env, work);
      await runCli(["run", "--session", id, "three"], env, work);
      const { code, stderr, firstLine } = await new Promise<{
        code: number | null;
        stderr: string;
        firstLine: string;
      }>((resolve, reject) => {
        const child = spawn(process.execPath, [BDSH_MAIN, "sessions", "events", id, "--json"], {
          env: { PATH: process.env.PATH, ...env },
          cwd: work,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let out = "";
        let err = "";
        let line = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const nl = out.indexOf("\n");
          if (nl >= 0 && !line) {
            line = out.slice(0, nl);
            child.stdout.destroy(); // like `head -1`: the reader goes away
          }
        });
        child.stderr.on("data", (chunk: Buffer) => {
          err += chunk.toString();
        });
        child.on("error", reject);
        child.on("close", (c) => resolve({ code: c, stderr: err, firstLine: line }));
      });
      expect(JSON.parse(firstLine)).toMatchObject({ type: "session/start" });
      expect(stderr).not.toContain("EPIPE");
      expect(stderr).not.toMatch(/\n\s+at /);
      expect(code === 0 || code === 141 || code === null).toBe(true);
    });
  });
}
