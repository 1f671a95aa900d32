/**
 * S3 as a person sees it: in `bdsh chat` in a real terminal (tmux), a message that starts a subagent shows
 * the launch, then the child's settlement notice arrives on its own and the parent's answer to it follows,
 * with no key pressed; the editor stays usable afterwards.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeProvider, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { BDSH } from "../support/run-cli.js";
import { TmuxSession, tmuxAvailable } from "../support/tmux.js";
import { delay, toolResultsSinceLastUser, userText } from "./support.js";

let fake: FakeProvider | undefined;
let session: TmuxSession | undefined;
afterEach(async () => {
  session?.kill();
  await fake?.close();
});

describe.skipIf(!tmuxAvailable())("bdsh chat with a subagent (S3, in tmux)", () => {
  it("shows the launch, then the settlement and the parent's answer, unprompted", async () => {
    fake = await startFakeProvider({
      script: async (request: FakeRequest) => {
        const text = userText(request);
        if (text.includes("SCREEN CHILD")) {
          await delay(500);
          return { text: "the child found 42" };
        }
        if (text.includes("Background subagent")) return { text: "PARENT SAYS: the helper reported 42" };
        if (toolResultsSinceLastUser(request) === 0)
          return { toolCalls: [{ id: "c", name: "subagent", arguments: { task: "SCREEN CHILD: find it" } }] };
        return { text: "I started a helper." };
      },
    });
    const home = mkdtempSync(join(tmpdir(), "bdsh-sa-tui-"));
    const workspace = mkdtempSync(join(tmpdir(), "bdsh-sa-tui-ws-"));
    session = TmuxSession.start([...BDSH, "chat"], {
      cwd: workspace,
      env: { BDSH_HOME: home, BDSH_BASE_URL: fake.url, DEEPSEEK_API_KEY: "sk-test-sa-tui" },
    });
    await session.waitForText("/help for commands", 30_000);
    session.type("delegate the search");
    session.keys("Enter");
    const screen = await session.waitFor(
      (s) => s.includes("PARENT SAYS: the helper reported 42"),
      "the parent's answer to the settlement",
      30_000,
    );
    expect(screen).toContain("I started a helper.");
    expect(screen).toMatch(/⇠ subagent \S+ done/); // the child's card settles from the parent's log
    expect(screen.indexOf("I started a helper.")).toBeLessThan(screen.indexOf("PARENT SAYS"));
    // The editor still takes input after the unprompted turn.
    session.type("thanks");
    await session.waitFor((s) => s.includes("› thanks"), "the typed text in the editor");
  });
});
