/**
 * `bdsh run` in a real terminal (tmux), as a person would: the approval question stays on screen with its
 * choices and the typed key; "allow this exact command in this project" approves nothing else; and
 * `bdsh run … | tee` leaves stdout exactly the final answer.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeProvider, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { answeredApproval, BDSH_MAIN } from "../support/run-cli.js";
import { TmuxSession, tmuxAvailable } from "../support/tmux.js";

let fake: FakeProvider | undefined;
const sessions: TmuxSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  await fake?.close();
  fake = undefined;
});

function messages(request: FakeRequest): Array<{ role: string; content: unknown }> {
  return (request.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
}

function said(request: FakeRequest, word: string): boolean {
  return messages(request).some((m) => m.role === "user" && JSON.stringify(m.content).includes(word));
}

const answered = (request: FakeRequest) => messages(request).some((m) => m.role === "tool");

function place() {
  const root = mkdtempSync(join(tmpdir(), "bdsh-run-tty-"));
  const dirs = { root, home: join(root, "home"), a: join(root, "a"), b: join(root, "b") };
  for (const dir of [dirs.home, dirs.a, dirs.b]) mkdirSync(dir);
  return dirs;
}

const bdsh = (...args: string[]) => [process.execPath, BDSH_MAIN, ...args].map((a) => `'${a}'`).join(" ");

describe.skipIf(!tmuxAvailable())("bdsh run in a real terminal (tmux, 100 columns)", () => {
  it("the approval question stays with its choices and the typed key; an exact command approved in one project approves no other", async () => {
    fake = await startFakeProvider({
      script: (request) => {
        if (answered(request)) return { text: "Finished." };
        const command = said(request, "second") ? "rm -rf src test .git" : "rm -rf build";
        return { toolCalls: [{ id: "c1", name: "bash", arguments: { command, description: "clean" } }] };
      },
    });
    const at = place();
    for (const dir of [at.a, at.b]) mkdirSync(join(dir, "build"));
    // Three runs one after the other: approve `rm -rf build` for project a; then a different recursive
    // delete in a, and the same command in b. Both must ask again.
    const script = [
      `cd '${at.a}' && ${bdsh("run", "first")}`,
      `${bdsh("run", "second")}`,
      `cd '${at.b}' && ${bdsh("run", "third")}`,
    ].join("; ");
    const session = TmuxSession.start(["sh", "-c", script], {
      cwd: at.a,
      env: {
        BDSH_HOME: at.home,
        BDSH_BASE_URL: fake.url,
        DEEPSEEK_API_KEY: "sk-test-run-tty",
        NO_COLOR: "1",
      },
      columns: 100,
      rows: 40,
    });
    sessions.push(session);
    const asked = await session.waitForText("your choice (y/c/s/p/N):");
    expect(asked).toContain("approval needed for bash (bdsh is waiting for you):");
    expect(asked).toContain("│ rm -rf build");
    expect(asked).toContain("[c] allow this exact command in this project from now on");
    expect(asked).toContain("[p] allow every `recursive-delete` command in every project, permanently");
    expect(asked).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /); // no spinner while it waits
    session.type("c");
    const echoed = await session.waitForText("your choice (y/c/s/p/N): c");
    expect(echoed).toContain("[y] allow once"); // the choices are still there
    session.keys("Enter");
    // The second run: a different recursive delete in the same project asks again.
    const second = await session.waitFor(
      (s) => s.includes("│ rm -rf src test .git") && s.trimEnd().endsWith("your choice (y/c/s/p/N):"),
      "the second run's question",
    );
    expect(second).toContain("✓ $ rm -rf build");
    session.type("n");
    session.keys("Enter");
    // The third run: the approved command in another project asks again.
    const third = await session.waitFor(
      (s) => s.includes('rejected tool "bash"') && s.trimEnd().endsWith("your choice (y/c/s/p/N):"),
      "the third run's question",
    );
    expect(third.split("│ rm -rf build").length - 1).toBe(2);
    session.type("n");
    session.keys("Enter");
    await session.waitForText("[exited");
    const stored = JSON.parse(readFileSync(join(at.home, "approvals.json"), "utf8"));
    expect(stored.commands).toEqual([expect.objectContaining({ project: at.a, command: "rm -rf build" })]);
  });

  it("`bdsh run PROMPT | tee FILE`: stdout is the final answer byte for byte; the screen is not garbled", async () => {
    const answer = "Line one of the answer.\nLine **two**, and a third word.\n";
    fake = await startFakeProvider({
      script: (request) =>
        answered(request)
          ? { text: answer }
          : {
              text: "Let me look first.",
              toolCalls: [
                { id: "c1", name: "bash", arguments: { command: "echo looked", description: "look" } },
              ],
            },
    });
    const at = place();
    const out = join(at.root, "stdout.txt");
    const session = TmuxSession.start(["sh", "-c", `${bdsh("run", "say it")} | tee '${out}'`], {
      cwd: at.a,
      env: { BDSH_HOME: at.home, BDSH_BASE_URL: fake.url, DEEPSEEK_API_KEY: "sk-test-run-tty" },
      columns: 100,
      rows: 40,
    });
    sessions.push(session);
    const screen = await session.waitForText("[exited 0]");
    expect(readFileSync(out, "utf8")).toBe(answer);
    // Each line whole on the screen: narration, the card, the answer (once), the summary.
    const lines = screen.split("\n").map((line) => line.trimEnd());
    expect(lines).toContain("Let me look first.");
    expect(lines).toContain("Line one of the answer.");
    expect(lines).toContain("Line **two**, and a third word.");
    expect(screen.split("Line one of the answer.").length - 1).toBe(1);
    expect(screen).toMatch(/\$ echo looked/);
  });
  it("issue 33 item 8 at 60 columns: the approval question and the summary keep their words whole, the approval is an approval/* event, and no empty .bdsh/ is left", async () => {
    fake = await startFakeProvider({
      script: (request) =>
        answered(request)
          ? { text: "Cleaned." }
          : {
              toolCalls: [
                { id: "c1", name: "bash", arguments: { command: "rm -rf build", description: "clean" } },
              ],
            },
    });
    const at = place();
    mkdirSync(join(at.a, "build"));
    const env = {
      BDSH_HOME: at.home,
      BDSH_BASE_URL: fake.url,
      DEEPSEEK_API_KEY: "sk-test-run-tty",
      NO_COLOR: "1",
    };
    const session = TmuxSession.start(["sh", "-c", bdsh("run", "clean up")], {
      cwd: at.a,
      env,
      columns: 60,
      rows: 30,
    });
    sessions.push(session);
    const asked = await session.waitForText("your choice (y/c/s/p/N):");
    // The question's prose is wrapped at words too (the command line itself is shown as it runs).
    const askedWords = new Set(asked.split(/\s+/));
    for (const word of ["[recursive-delete]", "project,", "permanently", "(command_allowlist)"])
      expect(askedWords.has(word), word).toBe(true);
    session.type("y");
    session.keys("Enter");
    const screen = await session.waitForText("[exited 0]");
    const id = /session ([0-9a-f]{8})/.exec(screen)?.[1] ?? "";
    const shown = new Set(screen.split(/\s+/));
    const summary = `session ${id} · continue: bdsh run --session ${id} "…" or bdsh chat --session ${id}`;
    expect(summary.split(/\s+/).filter((word) => !shown.has(word))).toEqual([]);
    expect(existsSync(join(at.a, "build"))).toBe(false);
    expect(existsSync(join(at.a, ".bdsh"))).toBe(false);
    const approval = await answeredApproval(id, env, at.a);
    expect(approval.requested).toMatchObject({ callId: "c1", tool: "bash", summary: "rm -rf build" });
    expect(approval.decision).toBe("allow-once");
  });
});
