/**
 * L16 with subagents through the real CLI: `bdsh run` starts two children in one step and exits only after
 * both settled and the parent answered their settlements; `bdsh sessions show` rolls the children's usage
 * up into the parent's (M20).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeProvider, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { runCli } from "../support/run-cli.js";
import { delay, toolResultsSinceLastUser, userText } from "./support.js";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
});

async function script(request: FakeRequest) {
  const text = userText(request);
  if (text.includes("KID ONE")) {
    await delay(200);
    return { text: "one done", usage: { input: 100, output: 10 } };
  }
  if (text.includes("KID TWO")) {
    await delay(400);
    return { text: "two done", usage: { input: 100, output: 10 } };
  }
  const settled = (text.match(/Background subagent \S+ finished/g) ?? []).length;
  if (settled === 2) return { text: "FINAL: both children reported", usage: { input: 10, output: 5 } };
  if (settled === 1) return { text: "one of two", usage: { input: 10, output: 5 } };
  if (toolResultsSinceLastUser(request) === 0)
    return {
      toolCalls: [
        { id: "k1", name: "subagent", arguments: { task: "KID ONE: work" } },
        { id: "k2", name: "subagent", arguments: { task: "KID TWO: work" } },
      ],
      usage: { input: 10, output: 5 },
    };
  return { text: "started both", usage: { input: 10, output: 5 } };
}

describe("bdsh run with subagents (L16, S3, M20)", () => {
  it("exits only after both children settled, and sessions show rolls their usage up", async () => {
    fake = await startFakeProvider({ script });
    const env = {
      BDSH_HOME: mkdtempSync(join(tmpdir(), "bdsh-sa-cli-")),
      BDSH_BASE_URL: fake.url,
      DEEPSEEK_API_KEY: "sk-test",
    };
    const result = await runCli(["run", "--json", "delegate", "two", "tasks"], env);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; sessionId: string; data: Record<string, unknown> });
    const settled = events.filter((e) => e.type === "user/message" && e.data.source === "subagent-settled");
    // Both settled before the run ended (a settlement may join the other's turn as a steer).
    expect(settled.length).toBe(2);
    const last = events.findLast((e) => e.type === "assistant/message");
    expect(JSON.stringify(last?.data)).toMatch(/FINAL: both children reported|one of two/);
    expect(events.at(-2)).toMatchObject({ type: "turn/end", data: { reason: "completed" } });
    const sessionId = events[0]!.sessionId;
    const show = await runCli(["sessions", "show", sessionId], env);
    expect(show.code).toBe(0);
    const own = Number(/usage:.* · (\d+) requests?/.exec(show.stdout)?.[1]);
    const total = Number(/with children:.* · (\d+) requests?/.exec(show.stdout)?.[1]);
    expect(own).toBeGreaterThanOrEqual(3);
    expect(total).toBe(own + 2); // each child made one request
  });
});
