/**
 * `bdsh chat` driven in a real pseudo-terminal (tmux), asserting on the captured screen and on what reached
 * the scripted provider (issue 15 acceptance: each bug found in the old chat).
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type FakeProvider,
  type FakeRequest,
  type FakeScript,
  startFakeProvider,
} from "../../testing/fake-provider/index.js";
import { answeredApproval, BDSH, runCli } from "../support/run-cli.js";
import { TmuxSession, tmuxAvailable } from "../support/tmux.js";
import { waitUntil } from "../support/wait.js";

const HARNESS_TEXT = /^(Runtime context|Time sampled|<)/;

let fake: FakeProvider | undefined;
const sessions: TmuxSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  await fake?.close();
  fake = undefined;
});

type Place = { home: string; workspace: string };

function place(): Place {
  const root = mkdtempSync(join(tmpdir(), "bdsh-chat-tui-"));
  const home = join(root, "home");
  const workspace = join(root, "workspace");
  mkdirSync(home);
  mkdirSync(workspace);
  return { home, workspace };
}

function chat(at: Place, url: string, extraEnv: NodeJS.ProcessEnv = {}): TmuxSession {
  const session = TmuxSession.start([...BDSH, "chat"], {
    cwd: at.workspace,
    env: { BDSH_HOME: at.home, BDSH_BASE_URL: url, DEEPSEEK_API_KEY: "sk-test-chat-tui", ...extraEnv },
  });
  sessions.push(session);
  return session;
}

/** Every user message's text in every request, the harness's own context messages left out. */
function userTexts(requests: readonly FakeRequest[]): string[] {
  return requests.flatMap((r) =>
    ((r.body?.messages ?? []) as Array<{ role: string; content: unknown }>)
      .filter((m) => m.role === "user")
      .map((m) =>
        typeof m.content === "string"
          ? m.content
          : (m.content as Array<{ text?: string }>).map((part) => part.text ?? "").join(""),
      )
      .filter((text) => !HARNESS_TEXT.test(text)),
  );
}

function toolResultCount(request: FakeRequest): number {
  return ((request.body?.messages ?? []) as Array<{ role: string }>).filter((m) => m.role === "tool").length;
}

async function ready(session: TmuxSession): Promise<void> {
  await session.waitForText("/help for commands", 30_000);
}

/** Every word of `line` is whole somewhere on `screen`: the terminal cut none of them in two. */
function wordsWhole(screen: string, line: string): boolean {
  const shown = new Set(screen.split(/\s+/));
  return line.split(/\s+/).every((word) => shown.has(word));
}

async function startWith(script: FakeScript): Promise<FakeProvider> {
  fake = await startFakeProvider({ script });
  return fake;
}

describe.skipIf(!tmuxAvailable())("bdsh chat in a real terminal (tmux, 120 columns)", () => {
  it("an approval is answered in a modal: the key never reaches the model or the editor, and chat goes on", async () => {
    const at = place();
    mkdirSync(join(at.workspace, "victim"));
    writeFileSync(join(at.workspace, "victim", "keep.txt"), "precious\n");
    const provider = await startWith((request) =>
      userTexts([request]).at(-1) === "thanks"
        ? { text: "Second answer." }
        : toolResultCount(request) === 0
          ? {
              toolCalls: [
                { id: "rm1", name: "bash", arguments: { command: "rm -rf victim", description: "clean up" } },
              ],
            }
          : { text: "Understood, I left it alone." },
    );
    const tui = chat(at, provider.url);
    await ready(tui);
    tui.type("tidy the workspace");
    tui.keys("Enter");
    const prompt = await tui.waitForText("Approval needed: bash");
    expect(prompt).toContain("rm -rf victim");
    expect(prompt).toContain("[n] deny");
    // The choices say what they approve; the status line says who is awaited, not the tool it holds up.
    expect(prompt).toContain("[c] allow this exact command in this project from now on");
    expect(prompt).toContain("[p] allow every `recursive-delete` command in every project, permanently");
    expect(prompt).toContain("waiting for you");
    expect(prompt).not.toContain("running bash");
    tui.type("n");
    // The reply, then the turn's end: while a turn runs the empty editor is one line; after it, the framed
    // editor is back, and empty — the answer was not typed into it (a typed "n" would show as "│ › n").
    const after = await tui.waitFor(
      (screen) => screen.includes("Understood, I left it alone.") && /│ › {10}/.test(screen),
      "the reply and the empty framed editor",
    );
    expect(after).toContain(`the user rejected tool "bash"`); // the call's card says how the approval went
    expect(after).not.toContain("Approval needed");
    expect(after).not.toContain("[exited");
    expect(existsSync(join(at.workspace, "victim", "keep.txt"))).toBe(true);
    expect(userTexts(provider.requests)).toEqual(["tidy the workspace", "tidy the workspace"]);
    const last = provider.requests.at(-1)?.body?.messages as Array<{ role: string; content: string }>;
    expect(last.find((m) => m.role === "tool")?.content).toContain("rejected");
    // Still chatting: another message is a new turn.
    tui.type("thanks");
    tui.keys("Enter");
    await tui.waitForText("Second answer.");
  });

  it('`bdsh "task"` on a terminal opens chat with the task as its first message; the header shows the short id', async () => {
    const at = place();
    const provider = await startWith(() => ({ text: "Here is the fix." }));
    const tui = TmuxSession.start([...BDSH, "fix the bug"], {
      cwd: at.workspace,
      env: { BDSH_HOME: at.home, BDSH_BASE_URL: provider.url, DEEPSEEK_API_KEY: "sk-test-chat-tui" },
    });
    sessions.push(tui);
    const screen = await tui.waitForText("Here is the fix.");
    expect(screen).toMatch(/session [0-9a-f]{8} · model/);
    expect(screen).not.toContain("unknown command");
    expect(userTexts(provider.requests)).toEqual(["fix the bug"]);
    tui.keys("C-d");
    // Leaving: no empty editor left on screen, and how to come back.
    const left = await tui.waitForText("[exited 0]");
    expect(left).toMatch(/to continue this session: bdsh resume [0-9a-f]{8}/);
    expect(left).not.toContain("│ ›");
  });

  it("--continue, /model and /resume show the live conversation, assistant text included, with the totals of sessions show", async () => {
    const at = place();
    writeFileSync(join(at.workspace, "a.txt"), "hello from a\n");
    const provider = await startWith((request) =>
      toolResultCount(request) === 0
        ? {
            text: "Let me look at the file.",
            toolCalls: [{ id: "r1", name: "read", arguments: { file_path: "a.txt" } }],
            usage: { input: 1200, output: 40, cacheRead: 300 },
          }
        : { text: "It says hello from a.", usage: { input: 1400, output: 20, cacheRead: 900 } },
    );
    const env = { BDSH_HOME: at.home, BDSH_BASE_URL: provider.url, DEEPSEEK_API_KEY: "sk-test-chat-tui" };
    const run = await runCli(["run", "what is in a.txt?"], env, at.workspace);
    expect(run.code).toBe(0);
    const id = /session (\S+)/.exec(run.stderr)?.[1] ?? "";
    const shown = await runCli(["sessions", "show", id], env, at.workspace);
    // The tokens and requests (the cost depends on the model's price, and /model changes the model).
    const totals = /usage: +(.+ requests)/.exec(shown.stdout)?.[1] ?? "";
    expect(totals).toContain("2 requests");
    const conversation = (screen: string) => {
      const header = screen.indexOf(`session ${id}`);
      const asked = screen.indexOf("what is in a.txt?");
      const look = screen.indexOf("Let me look at the file.");
      const card = screen.indexOf("✓ read a.txt");
      const answer = screen.indexOf("It says hello from a.");
      return header >= 0 && header < asked && asked < look && look < card && card < answer;
    };

    const tui = TmuxSession.start([...BDSH, "chat", "--continue"], { cwd: at.workspace, env });
    sessions.push(tui);
    await tui.waitFor(conversation, "the header, then the whole conversation");
    const count = (screen: string) => screen.split(totals).length - 1;
    tui.type("/cost");
    tui.keys("Enter");
    // The turn's summary line and /cost: the same tokens and requests as `sessions show`.
    const first = await tui.waitFor((screen) => count(screen) >= 2 && screen.includes("› /cost"), "/cost");

    tui.type("/model deepseek-reasoner");
    tui.keys("Enter");
    tui.type("/cost");
    tui.keys("Enter");
    const afterModel = await tui.waitFor(
      (screen) => count(screen) >= count(first) + 1,
      "the same totals after /model",
    );
    expect(afterModel.split("It says hello from a.").length - 1).toBe(1); // nothing printed twice

    tui.type(`/resume ${id}`);
    tui.keys("Enter");
    tui.type("/cost");
    tui.keys("Enter");
    const resumed = await tui.waitFor(
      (screen) => count(screen) >= count(afterModel) + 1,
      "the same totals after /resume",
    );
    expect(resumed).not.toContain("thinking"); // reattaching replays no turn as running
    expect(resumed).not.toContain("[exited");
  });

  it("Esc/Ctrl-C stops a streaming reply at once and keeps what was shown", async () => {
    const at = place();
    const words = Array.from({ length: 600 }, (_, i) => `word${i}`).join(" ");
    const provider = await startWith([
      { text: words, chunkSize: 6, frameDelayMs: 40 },
      { text: "next turn ok" },
    ]);
    const tui = chat(at, provider.url);
    await ready(tui);
    tui.type("write a lot");
    tui.keys("Enter");
    await tui.waitForText("word20 ");
    const sent = Date.now();
    tui.keys("C-c");
    const stopped = await tui.waitForText("⏹ interrupted");
    const latency = Date.now() - sent;
    console.log(`chat-tui: Ctrl-C to "interrupted" on screen: ${latency} ms`);
    expect(stopped).not.toContain("word599");
    // Counted once the turn has ended: the frame that first shows "interrupted" may still hold the old live
    // region under the kept text for a moment (tmux captured it between two writes of one redraw).
    const ended = await tui.waitFor((s) => !s.includes("Esc to interrupt"), "the turn to end");
    const shownWords = (s: string) => (s.match(/word\d+/g) ?? []).length;
    const atStop = shownWords(ended);
    await new Promise((resolve) => setTimeout(resolve, 800));
    const later = tui.screen();
    expect(shownWords(later)).toBe(atStop); // nothing more of the stream was drawn
    expect(later).not.toContain("word599");
    // The chat is usable at once, and the next message is a new turn.
    tui.type("go on");
    tui.keys("Enter");
    await tui.waitForText("next turn ok");
  });

  it("a pasted three-line message is one message; /exit leaves; history survives a restart", async () => {
    const at = place();
    const provider = await startWith([{ text: "Got all three lines." }]);
    const first = chat(at, provider.url);
    await ready(first);
    first.paste("line one\nline two\nline three");
    await first.waitForText("line three");
    first.keys("Enter");
    await first.waitForText("Got all three lines.");
    expect(provider.requests).toHaveLength(1);
    expect(userTexts(provider.requests)).toEqual(["line one\nline two\nline three"]);
    first.type("/exit");
    first.keys("Enter");
    await first.waitForText("[exited 0]");

    const second = chat(at, provider.url);
    await ready(second);
    second.keys("Up"); // the latest entry is the /exit command
    await second.waitForText("› /exit");
    second.keys("Up");
    const recalled = await second.waitForText("› line one");
    expect(recalled).toContain("line three");
    second.keys("C-d"); // not empty: deletes forward, does not leave
    second.keys("C-u");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(second.screen()).not.toContain("[exited");
  });

  it("a provider 401 is shown inline with what to do, and chat stays open", async () => {
    const at = place();
    const provider = await startWith([
      {
        status: 401,
        body: { error: { message: "Incorrect API key provided", type: "authentication_error" } },
      },
    ]);
    const tui = chat(at, provider.url);
    await ready(tui);
    tui.type("hello");
    tui.keys("Enter");
    const shown = await tui.waitForText("AUTH");
    await tui.waitForText("doctor --online");
    expect(shown).not.toContain("[exited");
    tui.keys("C-c");
    await tui.waitForText("Press Ctrl-C again to leave");
    tui.keys("C-c");
    await tui.waitForText("[exited 0]");
  });
  it("issue 33 item 5: / opens a filtered menu of the commands with their help, Tab completes, /model and /resume open pickers, an unknown command says so", async () => {
    const at = place();
    const provider = await startWith(() => ({ text: "Hello back." }));
    const tui = chat(at, provider.url);
    await ready(tui);
    tui.type("hello");
    tui.keys("Enter");
    const before = await tui.waitForText("Hello back.");
    const id = /session ([0-9a-f]{8}) · model/.exec(before)?.[1] ?? "";
    tui.type("/");
    const menu = await tui.waitForText("/resume");
    expect(menu).toMatch(/› \/model +pick a model/);
    expect(menu).toMatch(/\/compact +condense the history now/);
    expect(menu.indexOf("Hello back.")).toBeLessThan(menu.indexOf("/resume")); // under the input, the transcript kept
    tui.type("mo");
    await tui.waitFor(
      (s) => /\/model +pick a model/.test(s) && !s.includes("/resume"),
      "the menu filtered to /model",
    );
    tui.keys("Tab");
    await tui.waitFor((s) => s.includes("│ › /model ") && !s.includes("pick a model"), "/model completed");
    tui.keys("C-u");
    tui.type("/co");
    await tui.waitForText("/compact");
    tui.keys("Escape");
    await tui.waitFor((s) => s.includes("│ › /co ") && !s.includes("/compact"), "Esc to close the menu");
    tui.keys("C-u");
    // /model without an id: the provider's models, then the effort levels; the choice is used from the next turn.
    tui.type("/mo");
    tui.keys("Enter");
    const models = await tui.waitForText("model for deepseek");
    expect(models).toContain("deepseek-v4-pro");
    tui.keys("Down");
    tui.keys("Enter");
    await tui.waitForText("effort for deepseek-v4-pro");
    tui.keys("Down");
    tui.keys("Enter");
    await tui.waitForText("model deepseek/deepseek-v4-pro (effort max) from the next turn");
    tui.type("again");
    tui.keys("Enter");
    await waitUntil(() => provider.requests.length === 2, "the second request");
    expect(provider.requests[1]?.body).toMatchObject({ model: "deepseek-v4-pro", reasoning_effort: "max" });
    // /resume without an id: this workspace's sessions, the open one marked.
    await tui.waitFor((s) => s.split("Hello back.").length === 3, "the second reply");
    tui.type("/resume");
    tui.keys("Enter");
    const sessionsShown = await tui.waitForText("resume which session?");
    expect(sessionsShown).toContain(`${id}  `);
    expect(sessionsShown).toContain("(open now)");
    tui.keys("Escape");
    await tui.waitFor((s) => !s.includes("resume which session?"), "the picker to close");
    tui.type("/frobnicate");
    await tui.waitForText("no such command");
    tui.keys("Enter");
    const unknown = await tui.waitForText("unknown command /frobnicate — /help lists the commands");
    expect(unknown).not.toContain("usage");
  });

  it("issue 33 item 8 at 60 columns: the header keeps its words whole, plan mode stays shown after the first message, an approval answered here is an approval/* event", async () => {
    const at = place();
    mkdirSync(join(at.workspace, "build"));
    const provider = await startWith((request) =>
      toolResultCount(request) === 0 && userTexts([request]).includes("clean")
        ? {
            toolCalls: [
              { id: "rm1", name: "bash", arguments: { command: "rm -rf build", description: "clean" } },
            ],
          }
        : { text: "Planned." },
    );
    const env = {
      BDSH_HOME: at.home,
      BDSH_BASE_URL: provider.url,
      DEEPSEEK_API_KEY: "sk-test-chat-tui",
      BDSH_MODEL: "deepseek-v4-pro",
    };
    const tui = TmuxSession.start([...BDSH, "chat"], { cwd: at.workspace, env, columns: 60, rows: 30 });
    sessions.push(tui);
    const opened = await tui.waitForText("session ");
    const id = /session ([0-9a-f]{8})/.exec(opened)?.[1] ?? "";
    await tui.waitFor(
      (s) => wordsWhole(s, `session ${id} · model deepseek/deepseek-v4-pro · /help for commands`),
      "the header's words whole at 60 columns",
    );
    tui.type("/plan");
    tui.keys("Enter");
    await tui.waitForText("plan mode");
    tui.type("clean");
    tui.keys("Enter");
    await tui.waitForText("Approval needed: bash");
    tui.type("y");
    const after = await tui.waitFor(
      (s) => s.includes("Planned.") && s.includes("│ › "),
      "the reply after the approval",
    );
    expect(after).toContain("⏸ plan mode"); // still shown after the first message
    tui.keys("C-d");
    await tui.waitForText("[exited 0]");
    const approval = await answeredApproval(id, env, at.workspace);
    expect(approval.requested).toMatchObject({ callId: "rm1", tool: "bash", summary: "rm -rf build" });
    expect(approval.decision).toBe("allow-once");
  });

  it("issue 33 item 8: chat with no API key shows one error naming the variable, not a provider refusal", async () => {
    const at = place();
    const tui = TmuxSession.start([...BDSH, "chat"], {
      cwd: at.workspace,
      env: { BDSH_HOME: at.home, BDSH_BASE_URL: "http://127.0.0.1:9" },
    });
    sessions.push(tui);
    const shown = await tui.waitForText("/exit leaves");
    expect(shown).toContain("AUTH: no API key for deepseek: set DEEPSEEK_API_KEY or BDSH_API_KEY");
    expect(shown).not.toContain("refused");
    expect(shown.split("AUTH").length - 1).toBe(1);
  });
  it("issue 33 item 4: a goal whose rounds make no progress stops after three, each round one short line", async () => {
    const at = place();
    const provider = await startWith(() => ({ text: "Still thinking about it." }));
    const tui = chat(at, provider.url);
    await ready(tui);
    tui.type("/goal make it shine");
    tui.keys("Enter");
    const blocked = await tui.waitForText("no progress in 3 rounds");
    expect(blocked).toContain("goal round 3/256");
    expect(blocked).not.toContain("goal round 4/256");
    expect(blocked).not.toContain("<goal_round>");
    expect(provider.requests).toHaveLength(3);
  });

  it("issue 33 item 7: `bdsh resume` without an id lists this workspace's sessions by last activity and opens the one picked", async () => {
    const at = place();
    const provider = await startWith((request) => ({
      text: userTexts([request]).includes("second") ? "Second here." : "First here.",
    }));
    const env = { BDSH_HOME: at.home, BDSH_BASE_URL: provider.url, DEEPSEEK_API_KEY: "sk-test-chat-tui" };
    const first = await runCli(["run", "first"], env, at.workspace);
    await runCli(["run", "second"], env, at.workspace);
    const firstId = /session ([0-9a-f]{8})/.exec(first.stderr)?.[1] ?? "";
    // The first session is active again: it is listed first, as --continue would pick it.
    await runCli(["run", "--session", firstId, "first again"], env, at.workspace);
    const tui = TmuxSession.start([...BDSH, "resume"], { cwd: at.workspace, env });
    sessions.push(tui);
    const listed = await tui.waitForText("resume which?");
    expect(listed).toMatch(new RegExp(`1\\. ${firstId} `));
    expect(listed).toMatch(/2\. [0-9a-f]{8} .*second/);
    tui.keys("Enter");
    const opened = await tui.waitForText(`session ${firstId} · model`);
    expect(opened).toContain("First here.");
  });
});
