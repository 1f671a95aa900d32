/**
 * `bdsh` without a command: chat on a terminal, `run` when piped or with a run-only option, and a typo of
 * a command named as such instead of being sent to a model.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { editDistance, nearestCommand, type Routing, routeArgv } from "../../src/cli/default-command.js";
import { runCli } from "../support/run-cli.js";

const commands = ["run", "chat", "sessions", "schedules", "doctor", "serve", "trust", "speak", "mcp", "help"];
const routing = (terminal: boolean): Routing => ({
  commands,
  valueOptions: ["--cwd", "--model", "--session", "--attach"],
  runOnlyOptions: ["--json", "-q", "--quiet", "--goal"],
  terminal,
});

describe("routeArgv", () => {
  it("no words: chat on a terminal, the program's own help otherwise", () => {
    expect(routeArgv([], routing(true))).toEqual({ argv: ["chat"] });
    expect(routeArgv(["--model", "m"], routing(true))).toEqual({ argv: ["chat", "--model", "m"] });
    expect(routeArgv([], routing(false))).toEqual({ argv: [] });
  });

  it("words that are no command are a task: chat on a terminal, run when piped or with a run-only option", () => {
    expect(routeArgv(["fix the bug"], routing(true))).toEqual({ argv: ["chat", "fix the bug"] });
    expect(routeArgv(["fix", "the", "bug"], routing(false))).toEqual({ argv: ["run", "fix", "the", "bug"] });
    expect(routeArgv(["--json", "fix the bug"], routing(true))).toEqual({
      argv: ["run", "--json", "fix the bug"],
    });
    expect(routeArgv(["-q", "fix it"], routing(true))).toEqual({ argv: ["run", "-q", "fix it"] });
    // An option's value is not a word: `--model run` does not make `run` the command.
    expect(routeArgv(["--model", "run", "fix it"], routing(true))).toEqual({
      argv: ["chat", "--model", "run", "fix it"],
    });
  });

  it("known commands, --help and --version are left alone", () => {
    expect(routeArgv(["sessions", "list"], routing(true))).toEqual({ argv: ["sessions", "list"] });
    expect(routeArgv(["--cwd", "/x", "run", "go"], routing(true))).toEqual({
      argv: ["--cwd", "/x", "run", "go"],
    });
    expect(routeArgv(["--help"], routing(true))).toEqual({ argv: ["--help"] });
    expect(routeArgv(["-v"], routing(true))).toEqual({ argv: ["-v"] });
  });

  it("a single word close to a command is a typo, not a task", () => {
    expect(routeArgv(["sesions"], routing(true))).toEqual({ typo: "sesions", command: "sessions" });
    expect(routeArgv(["chta"], routing(false))).toEqual({ typo: "chta", command: "chat" });
    expect(routeArgv(["test"], routing(true))).toEqual({ argv: ["chat", "test"] });
    expect(nearestCommand("refactor", commands)).toBeUndefined();
    expect(editDistance("sesions", "sessions")).toBe(1);
    expect(editDistance("chta", "chat")).toBe(1);
  });
});

describe("bdsh as a program", () => {
  it("a typo exits 2 naming the command; --help still prints the help", async () => {
    const typo = await runCli(["sesions"], { BDSH_HOME: "/nonexistent-bdsh-home" });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('bdsh: USAGE: unknown command "sesions"; did you mean `bdsh sessions`?');
    // Piped chat whose session cannot open (no key) ends with that one error, exit 2 — not 0.
    const chat = await runCli(
      ["chat"],
      { BDSH_HOME: mkdtempSync(join(tmpdir(), "bdsh-nokey-")) },
      undefined,
      "hi\n",
    );
    expect(chat.code).toBe(2);
    expect(chat.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^bdsh: AUTH: no API key/)]);
    const help = await runCli(["--help"], { BDSH_HOME: "/nonexistent-bdsh-home" });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: bdsh");
  });
});
