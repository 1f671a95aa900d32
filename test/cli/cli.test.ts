import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { newEvent } from "../../src/log/events.js";
import { eventJson } from "../../src/log/serialize.js";
import { openStore } from "../../src/store/open-store.js";
import { testDatabaseUrl } from "../support/database.js";
import { BDSH_MAIN, runCli } from "../support/run-cli.js";

/** A fresh home and workspace per test, so the tests can run concurrently. */
function dirs(): { home: string; work: string } {
  const root = mkdtempSync(join(tmpdir(), "bdsh-cli-"));
  return { home: join(root, "home"), work: root };
}

describe.concurrent("bdsh CLI skeleton", () => {
  it("--help lists the commands and exits 0", async () => {
    const { home } = dirs();
    const result = await runCli(["--help"], { BDSH_HOME: home });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("doctor");
    expect(result.stdout).toContain("sessions");
  });

  it("--version prints the package version", async () => {
    const { home } = dirs();
    const result = await runCli(["--version"], { BDSH_HOME: home });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("a word close to a command's name is a usage error (exit 2); other words are a task", async () => {
    const { home } = dirs();
    const result = await runCli(["sesions"], { BDSH_HOME: home });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("bdsh: USAGE:");
    // Piped, `bdsh WORDS` is `bdsh run WORDS`: here it needs a key, and says so (nothing else ran).
    const task = await runCli(["frobnicate"], { BDSH_HOME: home });
    expect(task.code).toBe(2);
    expect(task.stderr).toContain("bdsh: AUTH: no API key");
  });

  it("doctor works on an empty home, reports the SQLite store and never prints a secret", async () => {
    const { home, work } = dirs();
    const secret = "sk-test-7f3a9c1d-very-secret";
    const result = await runCli(["doctor"], { BDSH_HOME: home, DEEPSEEK_API_KEY: secret }, work);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/store\s+sqlite at .*bdsh\.db \(0 sessions\)/);
    expect(result.stdout).toContain("DEEPSEEK_API_KEY is set");
    expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it("doctor reports PostgreSQL when DATABASE_URL is set, without its password", async () => {
    const { home, work } = dirs();
    const url = new URL(testDatabaseUrl());
    url.password = "hunter2-password";
    const result = await runCli(["doctor"], { BDSH_HOME: home, DATABASE_URL: url.toString() }, work);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/store\s+postgres at /);
    expect(result.stdout + result.stderr).not.toContain("hunter2-password");
  });

  it("sessions list works on an empty home and says which store is in use", async () => {
    const { home, work } = dirs();
    const result = await runCli(["sessions", "list"], { BDSH_HOME: home }, work);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("No sessions yet.");
    expect(result.stderr).toContain("store: sqlite");
  });

  it("a config error exits 2 naming the key and the file, before anything else happens", async () => {
    const { home, work } = dirs();
    const { mkdirSync } = await import("node:fs");
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "config.yaml"), "model:\n  effort: extreme\n");
    const result = await runCli(["sessions", "list"], { BDSH_HOME: home }, work);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      `bdsh: CONFIG: ${join(home, "config.yaml")}: model.effort: expected one of off|low|high|max, got "extreme"`,
    );
    expect(result.stdout).toBe("");
  });

  it("schedules run exits 2 on a setup error (no API key), with one error line and nothing sent", async () => {
    const { home, work } = dirs();
    const store = await openStore({ home });
    const session = await store.createSession({ metadata: { workspace: work } });
    await store.planning.createSchedule(session.id, {
      title: "check",
      prompt: "check the build",
      timing: { kind: "after_seconds", seconds: 1, from: Date.now() - 2000 },
      nextAt: Date.now() - 1000,
    });
    await store.close();
    const result = await runCli(["schedules", "run", "--once"], { BDSH_HOME: home }, work);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^bdsh: AUTH: no API key for deepseek/m);
    expect(result.stderr).not.toContain("    at "); // no stack trace
  });

  it("a bad flag value exits 2 naming the flag", async () => {
    const { home, work } = dirs();
    const result = await runCli(["--sandbox", "yolo", "doctor"], { BDSH_HOME: home }, work);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("bdsh: CONFIG: flag --sandbox: sandbox:");
  });

  it("sessions events --json prints the stored events as JSON Lines, exactly", async () => {
    const { home, work } = dirs();
    const store = await openStore({ home });
    const session = await store.createSession({ title: "demo" });
    const stored = await store.append(
      session.id,
      [
        newEvent("session/start", { kind: "main" }),
        newEvent("turn/start", {}, { turn: 1 }),
        newEvent("user/message", { text: "hello", source: "human" }, { turn: 1 }),
      ],
      0,
    );
    await store.close();
    const result = await runCli(["sessions", "events", session.id, "--json"], { BDSH_HOME: home }, work);
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split("\n")).toEqual(stored.map(eventJson));
    // Issue 15: a session that names no workspace is listed with --all, by its short id.
    const listed = await runCli(["sessions", "list", "--all"], { BDSH_HOME: home }, work);
    expect(listed.stdout).toContain(session.id.slice(-8)); // its short id
    const shown = await runCli(["sessions", "show", session.id], { BDSH_HOME: home }, work);
    expect(shown.stdout).toContain("title:     demo");
  });

  it("sessions events piped into head ends quietly (EPIPE), with no stack trace", async () => {
    const { home, work } = dirs();
    const store = await openStore({ home });
    const session = await store.createSession({ title: "long" });
    const many = Array.from({ length: 4000 }, (_, i) =>
      newEvent("user/message", { text: `line ${i} ${"x".repeat(200)}`, source: "human" }, { turn: 1 }),
    );
    await store.append(session.id, [newEvent("session/start", { kind: "main" }), ...many], 0);
    await store.close();
    const script = `"${process.execPath}" "${BDSH_MAIN}" sessions events ${session.id} --json | head -n 1 > /dev/null; echo "status=\${PIPESTATUS[0]}"`;
    const { execFileSync } = await import("node:child_process");
    const out = execFileSync("bash", ["-c", `${script} 2>&1`], {
      env: { PATH: process.env.PATH, BDSH_HOME: home },
      cwd: work,
      encoding: "utf8",
    });
    expect(out).not.toContain("EPIPE");
    expect(out).not.toContain("Error");
    expect(out.trim()).toBe("status=0");
  });

  it("sessions show of an unknown id fails with one error line", async () => {
    const { home, work } = dirs();
    const result = await runCli(["sessions", "show", "nope"], { BDSH_HOME: home }, work);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(/^bdsh: NOT_FOUND: no session nope/);
  });
});
