/**
 * T22 `working_directory` on a real agent with the scripted provider: a move inside the workspace is what
 * `bash` runs in and what the runtime context (SP4) says next, it is state in the log (`session/cwd`) that a
 * reopened agent (a resume, another server) picks up, and a move out of the workspace is refused.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Config, DEFAULT_CONFIG } from "../../src/config/schema.js";
import { workingDirectoryFact } from "../../src/context/runtime-context.js";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, type FakeReply, startFakeProvider } from "../../testing/fake-provider/index.js";
import { openTestAgent } from "../support/test-agent.js";

let fake: FakeProvider | undefined;
let store: Store | undefined;
afterEach(async () => {
  await fake?.close();
  await store?.close();
  fake = undefined;
  store = undefined;
});

const wd = (id: string, path?: string): FakeReply => ({
  toolCalls: [{ id, name: "working_directory", arguments: path === undefined ? {} : { path } }],
});
const pwd = (id: string): FakeReply => ({
  toolCalls: [{ id, name: "bash", arguments: { description: "where", command: "pwd" } }],
});

async function setup(script: FakeReply[]) {
  const home = mkdtempSync(join(tmpdir(), "bdsh-wd-home-"));
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "bdsh-wd-ws-")));
  mkdirSync(join(workspace, "pkg", "sub"), { recursive: true });
  fake = await startFakeProvider({ script });
  store = await openStore({ home });
  const config: Config = {
    ...DEFAULT_CONFIG,
    model: { ...DEFAULT_CONFIG.model, base_url: fake.url },
    session: { titles: false },
  };
  return { home, workspace, common: { store, config, workspace, home } };
}

function resultOf(events: LogEvent[], callId: string): string | undefined {
  const event = events.find((e) => e.type === "tool/result" && e.data.callId === callId);
  return event?.type === "tool/result" ? event.data.text : undefined;
}

/** The runtime-context messages a request carried (SP4 user messages). */
function contextTexts(request: { body?: Record<string, unknown> | undefined }): string[] {
  const messages = (request.body?.messages ?? []) as { role: string; content?: unknown }[];
  return messages
    .filter((m) => m.role === "user" && typeof m.content === "string")
    .map((m) => m.content as string)
    .filter((text) => text.includes("Working directory:"));
}

describe("T22 working_directory", () => {
  it("moves into a workspace directory: bash's pwd and the next runtime context agree", async () => {
    const { workspace, common } = await setup([wd("w0"), wd("w1", "pkg/sub"), pwd("b1"), { text: "done" }]);
    const { agent, session } = await openTestAgent(common);
    await agent.followup("go to pkg/sub");
    await agent.whenIdle();
    await agent.close();
    const sub = join(workspace, "pkg", "sub");
    const events = await store!.read(session.id);
    expect(resultOf(events, "w0")).toBe(`Current working directory: ${JSON.stringify(workspace)}.`);
    expect(resultOf(events, "w1")).toBe(
      `The working directory changed from ${JSON.stringify(workspace)} to ${JSON.stringify(sub)}.`,
    );
    expect(resultOf(events, "b1")).toBe(sub);
    const moved = events.find((e) => e.type === "session/cwd");
    expect(moved?.data).toEqual({ cwd: sub, previous: workspace });
    // Flushed before the tool answered: the result that tells the model comes after it in the log.
    const told = events.find((e) => e.type === "tool/result" && e.data.callId === "w1");
    expect(moved!.seq).toBeLessThan(told!.seq);
    // The step after the move tells the model the new directory (SP4), and nothing before it did.
    const latest = (index: number) => contextTexts(fake!.requests[index]!).at(-1) ?? "";
    expect(latest(1)).toContain(workingDirectoryFact(workspace));
    expect(latest(2)).toContain(workingDirectoryFact(sub));
  });

  it("is state in the log: a reopened agent (resume, another server) starts in the moved directory", async () => {
    const { workspace, common } = await setup([
      wd("w1", "pkg"),
      { text: "moved" },
      pwd("b2"),
      { text: "done" },
    ]);
    const first = await openTestAgent(common);
    await first.agent.followup("move");
    await first.agent.whenIdle();
    await first.agent.close();

    const second = await openTestAgent({ ...common, sessionId: first.session.id, owner: "another-server" });
    await second.agent.followup("where are you?");
    await second.agent.whenIdle();
    await second.agent.close();
    const events = await store!.read(first.session.id);
    expect(resultOf(events, "b2")).toBe(join(workspace, "pkg"));
    expect(second.agent.facts.cwd).toBe(join(workspace, "pkg"));
    expect(contextTexts(fake!.requests[2]!).at(-1)).toContain(workingDirectoryFact(join(workspace, "pkg")));
  });

  it("refuses /etc, a path out of the workspace by .., a symlink out of it, a file and a missing directory", async () => {
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "bdsh-wd-out-")));
    const { workspace, common } = await setup([
      wd("e1", "/etc"),
      wd("e2", "../.."),
      wd("e3", "escape"),
      wd("e4", "notes.txt"),
      wd("e5", "missing"),
      pwd("b1"),
      { text: "stayed" },
    ]);
    symlinkSync(outside, join(workspace, "escape"));
    writeFileSync(join(workspace, "notes.txt"), "x");
    const { agent, session } = await openTestAgent(common);
    await agent.followup("try to leave");
    await agent.whenIdle();
    await agent.close();
    const events = await store!.read(session.id);
    const outsideText = `outside the workspace ${JSON.stringify(workspace)}`;
    expect(resultOf(events, "e1")).toBe(
      `Error: cannot change the working directory to "/etc": ${outsideText}`,
    );
    expect(resultOf(events, "e2")).toMatch(
      new RegExp(
        `^Error: cannot change the working directory to ".*": ${outsideText.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
      ),
    );
    expect(resultOf(events, "e3")).toContain(outsideText);
    expect(resultOf(events, "e4")).toMatch(/: not a directory$/);
    expect(resultOf(events, "e5")).toMatch(/: not found$/);
    expect(resultOf(events, "b1")).toBe(workspace);
    expect(events.some((e) => e.type === "session/cwd")).toBe(false);
  });

  it("does not widen the sandbox: after a move, writes are still limited to the workspace", async () => {
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "bdsh-wd-out-")));
    const { common } = await setup([
      wd("w1", "pkg/sub"),
      {
        toolCalls: [
          { id: "x1", name: "write", arguments: { file_path: join(outside, "f.txt"), content: "x" } },
        ],
      },
      { text: "done" },
    ]);
    const { agent, session } = await openTestAgent(common);
    await agent.followup("write outside");
    await agent.whenIdle();
    await agent.close();
    const events = await store!.read(session.id);
    expect(resultOf(events, "x1")).toBe(
      `Error: cannot write "${join(outside, "f.txt")}": [sandbox: file access denied under workspace-write mode]`,
    );
  });
});
