/** Issue 14 finding 8: bad CLI input is a usage error (exit 2) and nothing reaches a model. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { runCli } from "../support/run-cli.js";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function env(): Promise<NodeJS.ProcessEnv> {
  fake = await startFakeProvider({ script: [{ text: "answer" }] });
  const home = mkdtempSync(join(tmpdir(), "bdsh-input-"));
  return { BDSH_HOME: home, BDSH_BASE_URL: fake.url, DEEPSEEK_API_KEY: "sk-input-test" };
}

describe("CLI input (issue 14 finding 8)", () => {
  it("--cwd that does not exist: exit 2, nothing sent", async () => {
    const result = await runCli(["run", "--cwd", "/nonexistent/bdsh-dir", "hi"], await env());
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe("bdsh: USAGE: --cwd /nonexistent/bdsh-dir: no such directory");
    expect(fake!.requests).toHaveLength(0);
  });

  it("an empty or blank prompt: exit 2, nothing sent", async () => {
    const environment = await env();
    for (const prompt of ["", "   "]) {
      const result = await runCli(["run", prompt], environment);
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toBe("bdsh: USAGE: the prompt is empty");
    }
    expect(fake!.requests).toHaveLength(0);
  });

  it("--replay with a missing file: exit 2", async () => {
    const result = await runCli(["run", "--replay", "/nonexistent/recording.jsonl", "hi"], await env());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("bdsh: USAGE: --replay /nonexistent/recording.jsonl: no such file");
  });

  it("--replay with an unreadable recording: exit 2", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "bdsh-rec-")), "bad.jsonl");
    writeFileSync(file, "{ not json\n");
    const result = await runCli(["run", "--replay", file, "hi"], await env());
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^bdsh: USAGE: cannot read the recording /);
  });

  it("`bdsh run -` reads the prompt from standard input", async () => {
    const result = await runCli(["run", "-"], await env(), undefined, "the prompt from stdin\n");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("answer\n");
    const body = fake!.requests[0]!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(body.messages)).toContain("the prompt from stdin");
  });

  it("`bdsh run -` with empty standard input is an empty prompt", async () => {
    const result = await runCli(["run", "-"], await env(), undefined, "");
    expect(result.code).toBe(2);
    expect(fake!.requests).toHaveLength(0);
  });
});
