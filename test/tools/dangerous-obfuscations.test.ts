/**
 * Issue 31 acceptance: the detector judges what runs, not what is written. The generated corpus
 * (fixtures/generate-obfuscations.ts → fixtures/obfuscations.json, at least 500 entries) is all flagged
 * with its base command's key; the option matcher and the program readers are checked on their own.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { analyzeCommand } from "../../src/tools/guards/dangerous-commands.js";
import { matchLong, parseOptions } from "../../src/tools/guards/option-grammar.js";
import { awkCommands, exCommands, sedCommands } from "../../src/tools/guards/program-runners.js";
import { joinContinuations } from "../../src/tools/guards/shell-expand.js";
import { loadShellParser, type ShellParser } from "../../src/tools/guards/shell-parse.js";
import { SAFE_COMMANDS } from "./dangerous-corpus.js";
import { generateObfuscations, type Obfuscation } from "./fixtures/generate-obfuscations.js";

let parser: ShellParser;
beforeAll(async () => {
  parser = await loadShellParser();
});
// A generous budget: these tests are about the rules, not the machine's load.
const keys = (command: string) => analyzeCommand(parser, command, { timeBudgetMs: 10_000 }).map((m) => m.key);

const corpus = JSON.parse(
  readFileSync(new URL("./fixtures/obfuscations.json", import.meta.url), "utf8"),
) as Obfuscation[];

describe("issue 31: the generated obfuscation corpus", () => {
  it("is the generator's output, with at least 500 entries", () => {
    expect(corpus).toEqual(generateObfuscations());
    expect(corpus.length).toBeGreaterThanOrEqual(500);
  });

  it("covers every hiding class the hostile tester used", () => {
    const classes = new Set(corpus.map((o) => o.class));
    for (const kind of [
      "function",
      "alias",
      "continuation",
      "hash",
      "command-path",
      "long-prefix",
      "push-delete",
      "runner",
      "wrapper",
      "wrapper-code",
      "interpreter",
      "git-config",
      "git-alias",
      "sql-decoder",
      "sql-unreadable",
    ])
      expect(classes).toContain(kind);
  });

  it("every obfuscation is flagged with its base command's key", () => {
    const missed = corpus.filter((o) => !keys(o.command).includes(o.key));
    expect(missed).toEqual([]);
  });

  it("the everyday corpus (at least 200 commands) stays unflagged", () => {
    expect(SAFE_COMMANDS.length).toBeGreaterThanOrEqual(200);
    const flagged = SAFE_COMMANDS.map((c) => [c, keys(c)] as const).filter(([, k]) => k.length > 0);
    expect(flagged).toEqual([]);
  });
});

describe("issue 31: what runs is judged", () => {
  it.each([
    ['f() { rm "$@"; }; f -rf d', "recursive-delete"],
    ["alias x=rm; x -rf d", "recursive-delete"],
    ["r\\\nm -rf d", "recursive-delete"],
    ["hash -p /bin/rm x; x -rf d", "recursive-delete"],
    ["sh -c 'rm \"$@\"' _ -rf d", "recursive-delete"],
    ["git config alias.x 'reset --hard'; git x", "git-reset-hard"],
    ["python3 -X dev -c 'import os'", "interpreter-eval"],
    ["echo RFJPUCBUQUJMRSB0 | base64 -d | psql", "decode-exec"],
  ])("%j matches %s", (command, key) => {
    expect(keys(command)).toContain(key);
  });

  it("a recursive function is expanded once, not forever", () => {
    expect(keys('f() { f "$@"; }; f -rf d')).toEqual([]);
    expect(keys('f() { rm "$@"; f "$@"; }; f -rf d')).toContain("recursive-delete");
  });

  it("a wrapper option the grammar does not know fails closed", () => {
    expect(keys("sudo --bogus rm -rf d")).toContain("unresolved-command");
    expect(keys("nice --bogus ls")).toContain("unresolved-command");
  });
});

describe("issue 31: option grammar (GNU getopt_long semantics)", () => {
  const table = {
    recursive: "none",
    "no-preserve-root": "none",
    "preserve-root": "optional",
    force: "none",
  } as const;

  it("a prefix names the one option it starts, and an exact name wins over longer ones", () => {
    expect(matchLong("rec", table)).toEqual(["recursive"]);
    expect(matchLong("force", { force: "none", "force-with-lease": "optional" })).toEqual(["force"]);
  });

  it("an ambiguous prefix reports every option it could be", () => {
    expect(matchLong("force-", { "force-with-lease": "none", "force-if-includes": "none" })).toHaveLength(2);
  });

  it("short clusters take the rest of the cluster or the next argument as a value", () => {
    const parsed = parseOptions(["-Bc", "code", "x"], { shortValue: "c", shortFlags: "B" });
    expect(parsed.options.map((o) => [o.name, o.value])).toEqual([
      ["-B", undefined],
      ["-c", "code"],
    ]);
    expect(parsed.rest).toBe(2);
  });

  it("an unknown option stops the read and is reported", () => {
    expect(parseOptions(["-Z", "rm"], { shortFlags: "a" }).unknown).toBe("-Z");
  });
});

describe("issue 31: program readers", () => {
  it("awk: literal commands are read, computed ones are opaque, regex alternation is not a pipe", () => {
    expect(awkCommands('BEGIN { system("rm -rf d") }')).toEqual({ commands: ["rm -rf d"], opaque: false });
    expect(awkCommands("{ system($0) }").opaque).toBe(true);
    expect(awkCommands("/a|b/ { print $1 }")).toEqual({ commands: [], opaque: false });
  });

  it("sed: the e command is read, s///e and a bare e are opaque, ordinary scripts are clean", () => {
    expect(sedCommands("1e rm -rf d").commands).toEqual(["rm -rf d"]);
    expect(sedCommands("s/x/y/e").opaque).toBe(true);
    expect(sedCommands("/x/{s/a/b/g;p};$d")).toEqual({ commands: [], opaque: false });
  });

  it("vim: ! commands are read, code-running commands are opaque, settings are clean", () => {
    expect(exCommands(":silent !rm -rf d").commands).toEqual(["rm -rf d"]);
    expect(exCommands('call system("x")').opaque).toBe(true);
    expect(exCommands("set ft=sh")).toEqual({ commands: [], opaque: false });
  });

  it("a backslash-newline is joined outside single quotes only", () => {
    expect(joinContinuations("r\\\nm 'a\\\nb'")).toBe("rm 'a\\\nb'");
    expect(joinContinuations("ls")).toBeUndefined();
  });
});
