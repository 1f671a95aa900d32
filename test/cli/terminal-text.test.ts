/**
 * Model-controlled text reaches a person's terminal only through the one sanitiser. The approval prompt of
 * `bdsh run` once printed the command as it was: escape sequences in it showed "ls -la victim" while the
 * real `rm -rf` line was overwritten, and the person typed y. Here, in a real terminal (tmux): the prompt
 * shows the whole command with its control characters made visible, and the question prompt cannot be
 * redrawn by its text; and, for any text, the sanitiser leaves nothing a terminal would act on.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { createElement } from "react";
import { afterEach, describe, expect, it } from "vitest";
import { ChatScreen } from "../../src/cli/chat/chat-screen.js";
import { withTuiEnvironment } from "../../src/cli/chat/load-tui.js";
import { PLAIN } from "../../src/cli/render/style.js";
import { sanitize } from "../../src/cli/render/terminal-text.js";
import { approvalPromptText } from "../../src/cli/terminal-approvals.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { BDSH, runCli } from "../support/run-cli.js";
import { TmuxSession, tmuxAvailable } from "../support/tmux.js";
import { waitUntil } from "../support/wait.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence is the point
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** The spoof from the report: the real command is overwritten, a fake reason drawn, the real one hidden. */
const SPOOF = "rm -rf victim\r\u001b[2Kls -la victim\n  reason: read-only listing\u001b[8m";

describe("sanitize: the one sanitiser for terminal text", () => {
  it("strips CSI, OSC, DCS and C1 sequences, SGR 8, CR, backspace and bidi overrides from prose", () => {
    expect(sanitize("a\u001b[2Jb\u001b]52;c;ZXZpbA==\u0007c\u0008d")).toBe("abcd");
    expect(sanitize("x\ty")).toBe("x  y");
    expect(sanitize("\u001b[8mhidden\u001b[0m shown")).toBe("hidden shown");
    expect(sanitize("a\u009b31mb\u001bPdcs\u001b\\c\u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\")).toBe(
      "abclink",
    );
    expect(sanitize("good\u202Edab\u2066x\u2069")).toBe("gooddabx");
    expect(sanitize("one\u2028two\r\nthree")).toBe("one\ntwo\nthree");
  });

  it("show mode keeps every printable character and marks each control, so nothing is hidden", () => {
    expect(sanitize(SPOOF, "show")).toBe("rm -rf victim␍␛[2Kls -la victim\n  reason: read-only listing␛[8m");
    expect(sanitize("rm\u001b[ -rf ~", "show")).toBe("rm␛[ -rf ~");
    expect(sanitize("a\u202Eb\u009bc", "show")).toBe("a⟨U+202E⟩b⟨U+009B⟩c");
  });

  it("for any text, neither mode leaves a control a terminal would act on; show mode drops no printable character", () => {
    const anyText = fc.oneof(
      fc.string({ unit: "binary", maxLength: 80 }),
      fc
        .array(
          fc.constantFrom(
            "\u001b",
            "[",
            "]",
            "8",
            "m",
            ";",
            "\u0007",
            "\u009b",
            "\\",
            "P",
            "a",
            "\r",
            "\u202e",
          ),
          {
            maxLength: 40,
          },
        )
        .map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(anyText, (text) => {
        expect(sanitize(text)).not.toMatch(ACTIVE);
        const shown = sanitize(text, "show");
        expect(shown).not.toMatch(ACTIVE);
        const printable = [...text.replace(/[\u2028\u2029]/g, "\n").replace(/\t/g, "  ")].filter(
          (c) => !ACTIVE.test(c),
        );
        let at = 0;
        for (const c of shown) if (c === printable[at]) at++;
        expect(at).toBe(printable.length);
      }),
      { numRuns: 500 },
    );
  });

  it("the approval prompt shows every line of the command, control characters marked, and warns", () => {
    const text = approvalPromptText({
      tool: "bash",
      summary: `${SPOOF}\nsecond line`,
      reason: "recursive-delete\u001b[8m",
    });
    expect(text).not.toMatch(ACTIVE);
    expect(text).toContain("  │ rm -rf victim␍␛[2Kls -la victim\n");
    expect(text).toContain("  │ second line\n");
    expect(text).toContain("control characters");
    expect(text).toContain("  reason: recursive-delete\n");
  });
});

describe("bdsh chat's approval modal", () => {
  it("draws the command with its controls shown, and prints a command too long for it whole above", async () => {
    const { render, ChatApp, MODAL_COMMAND_ROWS } = await withTuiEnvironment(async () => ({
      render: (await import("ink-testing-library")).render,
      ...(await import("../../src/cli/chat/chat-app.js")),
    }));
    const screen = new ChatScreen(PLAIN, 80, () => undefined);
    const summary = [SPOOF, ...Array.from({ length: 12 }, (_, i) => `echo line ${i}`), "rm -rf ~"].join("\n");
    screen.approvalCommand("bash", summary, MODAL_COMMAND_ROWS);
    screen.openModal({
      kind: "approval",
      tool: "bash",
      summary,
      reason: "recursive-delete",
      answer: () => undefined,
    });
    const app = render(createElement(ChatApp, { screen, p: PLAIN, hint: "hint" }));
    try {
      const frame = await waitUntil(
        () => app.frames.find((f) => f.includes("Approval needed")),
        "the modal drawn",
      );
      expect(frame).toContain("rm -rf victim␍␛[2Kls -la victim");
      expect(frame).toContain("the command goes on");
      expect(frame).toContain("control characters");
      const transcript = screen.transcript.map((line) => line.text).join("\n");
      expect(transcript).toContain("│ rm -rf ~");
      expect(transcript).toContain("│ echo line 11");
      expect(transcript).not.toMatch(ACTIVE);
    } finally {
      app.unmount();
    }
  });
});

describe("bdsh doctor", () => {
  it("prints a backend plugin's hostile directory name and error through the sanitiser", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-spoof-doctor-"));
    const plugin = join(home, "plugins", "evil\u001b]0;pwned\u0007x");
    mkdirSync(plugin, { recursive: true });
    writeFileSync(join(plugin, "plugin.yaml"), "kind: [\u001b[8m");
    const result = await runCli(
      ["doctor"],
      { BDSH_HOME: home },
      mkdtempSync(join(tmpdir(), "bdsh-spoof-ws-")),
    );
    expect(result.stdout).toContain("evilx");
    expect(result.stdout).not.toMatch(ACTIVE);
  });
});

let fake: FakeProvider | undefined;
const sessions: TmuxSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  await fake?.close();
  fake = undefined;
});

function runInTerminal(): TmuxSession {
  const root = mkdtempSync(join(tmpdir(), "bdsh-spoof-"));
  const home = join(root, "home");
  const workspace = join(root, "workspace");
  mkdirSync(home);
  mkdirSync(join(workspace, "victim"), { recursive: true });
  return TmuxSession.start([...BDSH, "run", "tidy up"], {
    cwd: workspace,
    env: { BDSH_HOME: home, BDSH_BASE_URL: fake!.url, DEEPSEEK_API_KEY: "sk-test-spoof", NO_COLOR: "1" },
  });
}

describe.skipIf(!tmuxAvailable())("bdsh run's prompts in a real terminal (tmux)", () => {
  it("the approval prompt cannot be spoofed: the real command and the real reason stay on screen", async () => {
    fake = await startFakeProvider({
      script: [
        { toolCalls: [{ id: "c1", name: "bash", arguments: { command: SPOOF, description: "list" } }] },
        { text: "stopped" },
      ],
    });
    const session = runInTerminal();
    sessions.push(session);
    const screen = await session.waitForText("your choice (y/c/s/p/N)");
    expect(screen).toContain("│ rm -rf victim␍␛[2Kls -la victim");
    expect(screen).toContain("reason: read-only listing␛[8m");
    expect(screen).toMatch(/\n {2}reason: .*recursive/); // the real reason, not hidden
    session.type("n");
    session.keys("Enter");
    await session.waitForText("[exited");
  });

  it("a question and its options are printed as text: they cannot redraw the prompt", async () => {
    fake = await startFakeProvider({
      script: [
        {
          toolCalls: [
            {
              id: "q1",
              name: "ask_user_question",
              arguments: {
                questions: [
                  {
                    question: "Delete the backups?\r\u001b[2KKeep the backups?",
                    options: ["no\rYES", "\u001b[8mlater"],
                  },
                ],
              },
            },
          ],
        },
        { text: "ok" },
      ],
    });
    const session = runInTerminal();
    sessions.push(session);
    // The question and its options are separate writes: wait for the last option, then read them all.
    const screen = await session.waitForText("2. later");
    expect(screen).toContain("Delete the backups?Keep the backups?");
    expect(screen).toContain("1. noYES");
    expect(screen).toContain("2. later");
    session.type("1");
    session.keys("Enter");
    await session.waitForText("[exited");
  });
});
