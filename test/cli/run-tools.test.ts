/**
 * Issue 5 acceptance: `bdsh run` against the fake provider edits a file in a real repository (read, edit,
 * run a test with bash) and exits 0; a canary secret in the harness's environment never reaches a
 * model-authored command, the events or the output.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { findPairingError } from "../../src/log/pairing.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { runCli } from "../support/run-cli.js";

const CANARY = "sk-canary-4f1d9e7a2b";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function repository(): string {
  const repo = mkdtempSync(join(tmpdir(), "bdsh-repo-"));
  mkdirSync(join(repo, "src"));
  writeFileSync(join(repo, "src", "parse.js"), "export function add(a, b) {\n  return a - b;\n}\n");
  writeFileSync(
    join(repo, "test.js"),
    'import { add } from "./src/parse.js";\nif (add(2, 3) !== 5) { console.error("add is broken"); process.exit(1); }\nconsole.log("ok");\n',
  );
  writeFileSync(join(repo, "package.json"), '{ "type": "module" }\n');
  execFileSync("git", ["init", "-q"], { cwd: repo });
  return repo;
}

describe("bdsh run with the standard tools", () => {
  it("reads, edits and tests a file in a real repository, then exits 0", async () => {
    const repo = repository();
    const file = join(repo, "src", "parse.js");
    fake = await startFakeProvider({
      script: [
        {
          reasoning: "Look at the code first.",
          toolCalls: [{ id: "c1", name: "read", arguments: { file_path: file } }],
        },
        {
          toolCalls: [
            {
              id: "c2",
              name: "edit",
              arguments: { file_path: file, old_string: "a - b", new_string: "a + b" },
            },
          ],
        },
        {
          toolCalls: [
            { id: "c3", name: "bash", arguments: { description: "Run the test", command: "node test.js" } },
          ],
        },
        {
          toolCalls: [
            { id: "c4", name: "bash", arguments: { description: "Show the environment", command: "env" } },
          ],
        },
        { text: "Fixed: the test passes." },
      ],
    });
    const home = mkdtempSync(join(tmpdir(), "bdsh-home-"));
    const result = await runCli(["run", "--json", "--cwd", repo, "fix", "add"], {
      BDSH_HOME: home,
      BDSH_BASE_URL: fake.url,
      DEEPSEEK_API_KEY: CANARY,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readFileSync(file, "utf8")).toContain("return a + b;");
    const events = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as LogEvent);
    const results = events.filter((e): e is LogEvent<"tool/result"> => e.type === "tool/result");
    expect(results.map((r) => [r.data.name, r.data.isError ?? false])).toEqual([
      ["read", false],
      ["edit", false],
      ["bash", false],
      ["bash", false],
    ]);
    expect(results[0]!.data.text).toContain("2:   return a - b;");
    expect(results[1]!.data.text).toContain("has been updated successfully");
    expect(results[2]!.data.text).toContain("ok");
    expect(results[2]!.data.text).not.toContain("[exit code");
    expect(results[3]!.data.text).toContain("NO_COLOR=1");
    expect(result.stdout + result.stderr).not.toContain(CANARY);
    expect(JSON.stringify(fake.requests.map((r) => r.rawBody))).not.toContain(CANARY);
    expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
  });
});
