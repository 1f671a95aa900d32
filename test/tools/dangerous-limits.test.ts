/**
 * Issue 14 finding 6, the denial-of-service half: commands over `tools.bash.max_command_bytes` are
 * refused before any analysis; pathological commands at the limit are analysed (either verdict)
 * without throwing; approvals cover every key a command matches. Behaviour only: the timings are in
 * bench/tools/detector.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { ScriptedApprovals } from "../../src/tools/approvals.js";
import {
  CommandGuard,
  DEFAULT_MAX_COMMAND_BYTES,
  withinBytes,
} from "../../src/tools/guards/command-guard.js";
import { analyzeCommand } from "../../src/tools/guards/dangerous-commands.js";
import { loadShellParser, type ShellParser } from "../../src/tools/guards/shell-parse.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { AnyToolDefinition, ApprovalAnswer } from "../../src/tools/types.js";
import { pathological } from "./dangerous-corpus.js";
import { call, makeExec, tempDir } from "./support.js";

const LIMIT = DEFAULT_MAX_COMMAND_BYTES;

describe("command size limit (tools.bash.max_command_bytes)", () => {
  it("is a config key with the guard's default", () => {
    expect(DEFAULT_CONFIG.tools.bash.max_command_bytes).toBe(LIMIT);
  });

  it("counts UTF-8 bytes, and answers in O(1) past the limit", () => {
    expect(withinBytes("a".repeat(LIMIT), LIMIT)).toBe(LIMIT);
    expect(withinBytes("a".repeat(LIMIT + 1), LIMIT)).toBeUndefined();
    expect(withinBytes("é".repeat(LIMIT / 2), LIMIT)).toBe(LIMIT);
    expect(withinBytes("é".repeat(LIMIT / 2 + 1), LIMIT)).toBeUndefined();
  });
});

describe("the guard", () => {
  const fakeBash: AnyToolDefinition = {
    name: "bash",
    toolset: "terminal",
    description: "",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    execute: async (args: { command: string }) => ({ text: `ran ${args.command.length}` }),
  };

  function setup(answers: ApprovalAnswer[], allowlist: string[] = [], maxCommandBytes?: number) {
    const registry = new ToolRegistry();
    registry.register(fakeBash);
    const hooks = new HookBus();
    new CommandGuard({ allowlist, ...(maxCommandBytes ? { maxCommandBytes } : {}) }).install(hooks);
    const ctx = makeExec({ workspace: tempDir() });
    const approvals = new ScriptedApprovals(() => answers.shift() ?? "deny");
    ctx.services.set("approvals", approvals);
    const pipeline = new ToolPipeline({ registry, hooks });
    const run = async (command: string) => pipeline.run(call("bash", { command }), ctx.exec);
    return { run, approvals };
  }

  it("refuses a command over its limit with a text naming the limit and the key, without asking", async () => {
    const { run, approvals } = setup(["allow-once"], ["recursive-delete"]);
    const output = await run(`rm -rf d; ${"x".repeat(900 * 1024)}`);
    expect(output.isError).toBe(true);
    expect(output.text).toContain(`over the ${LIMIT}-byte limit (config tools.bash.max_command_bytes)`);
    expect(output.text).toContain("write tool");
    expect(approvals.requests).toHaveLength(0);
  });

  it("refuses a 5 MB command before anything parses it (the bound on one call's arguments), without asking", async () => {
    const { run, approvals } = setup(["allow-once"], ["recursive-delete"]);
    const output = await run(`rm -rf d; ${"x".repeat(5 * 1024 * 1024)}`);
    expect(output.isError).toBe(true);
    expect(output.text).toMatch(
      /^Error: invalid arguments: \d+ bytes, over the \d+ bytes one tool call may carry/,
    );
    expect(approvals.requests).toHaveLength(0);
  });

  it("honours a smaller configured limit", async () => {
    const { run } = setup([], [], 16);
    expect((await run("echo 12345678901234567890")).text).toContain("over the 16-byte limit");
    expect((await run("echo short")).text).toBe("ran 10");
  });

  it("asks for every key a command matches, and an approved key does not cover another", async () => {
    const { run, approvals } = setup(["allow-session", "deny"], ["shell-c"]);
    // shell-c is allowlisted, but the string it runs deletes recursively.
    const ran = (command: string) => `ran ${command.length}`;
    expect((await run("bash -c 'rm -rf d'")).text).toBe(ran("bash -c 'rm -rf d'"));
    expect(approvals.requests[0]?.reason).toContain("[recursive-delete]");
    expect(approvals.requests[0]?.reason).not.toContain("[shell-c]");
    expect((await run("bash -c 'ls'")).text).toBe(ran("bash -c 'ls'"));
    expect((await run("rm -r other")).text).toBe(ran("rm -r other"));
    expect((await run("sh -c 'git reset --hard'")).text).toBe('Error: the user rejected tool "bash"');
    expect(approvals.requests.map((r) => r.reason)).toHaveLength(2);
    expect(approvals.requests[1]?.reason).toContain("[git-reset-hard]");
  });
});

describe("pathological commands at the limit", () => {
  let parser: ShellParser;
  beforeAll(async () => {
    parser = await loadShellParser();
  });

  for (const [name, command] of Object.entries(pathological(LIMIT))) {
    it(`${name}: analysed without throwing (default budget)`, () => {
      expect(Buffer.byteLength(command)).toBeLessThanOrEqual(LIMIT);
      const matches = analyzeCommand(parser, command);
      expect(Array.isArray(matches)).toBe(true);
      // Whatever the verdict, the parser still works afterwards.
      expect(analyzeCommand(parser, "rm -rf d", { timeBudgetMs: 10_000 }).map((m) => m.key)).toEqual([
        "recursive-delete",
      ]);
    });
  }

  it("a WebAssembly fault fails closed, and the next call gets a fresh parser", async () => {
    // Unbounded, this parse runs for seconds and then the WebAssembly runtime aborts (out of memory).
    const faulting = await loadShellParser();
    const keys = analyzeCommand(faulting, "a | ".repeat(16_384), { timeBudgetMs: 120_000 }).map((m) => m.key);
    expect(keys).toContain("analysis-failed");
    const next = await loadShellParser();
    expect(next).not.toBe(faulting);
    expect(analyzeCommand(next, "rm -rf d", { timeBudgetMs: 10_000 }).map((m) => m.key)).toEqual([
      "recursive-delete",
    ]);
    parser = next;
  });

  it("a dangerous command hidden at the end of a long safe one is found or the command is refused", () => {
    const command = `${"echo a; ".repeat(4000)}rm -rf d`;
    const keys = analyzeCommand(parser, command).map((m) => m.key);
    expect(keys.some((k) => k === "recursive-delete" || k === "analysis-timeout")).toBe(true);
  });
});

describe("a fresh process", () => {
  it("does not fail its first ordinary command closed as analysis-timeout (the parser is warmed first)", async () => {
    // A six-line script took over 25 ms cold (JIT), so the first command of every server was refused.
    const script = [
      "for i in $(seq 1 1200); do [ -s approval-id ] && break; sleep 0.05; done",
      "env > attacker-env.txt",
      'base="http://127.0.0.1:40153/v1/sessions/$BDSH_SESSION_ID/approvals"',
      'listed=$(curl -s -o listed.json -w "%{http_code}" "$base")',
      'answered=$(curl -s -X POST -d "{\\"approvalId\\":\\"$(cat approval-id)\\"}" "$base")',
      'echo "$listed $answered" > attack.done',
    ].join("\n");
    const { execFileSync } = await import("node:child_process");
    const program = `import { detectDangerousCommands } from ${JSON.stringify(new URL("../../src/tools/guards/dangerous-commands.ts", import.meta.url).pathname)};
process.stdout.write(JSON.stringify(await detectDangerousCommands(${JSON.stringify(script)})));`;
    for (let run = 0; run < 3; run++) {
      const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", program], {
        encoding: "utf8",
      });
      expect(JSON.parse(out)).toEqual([]);
    }
  });
});
