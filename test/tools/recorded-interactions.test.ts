/**
 * A person answering at the terminal (`bdsh run`, `bdsh chat`: the approvals and question answerer given as
 * tool options) is recorded in the log as one answering over HTTP is: `approval/requested` then
 * `approval/answered` with the decision, `question/asked` then `question/answered`, so `sessions events`
 * shows who allowed what. A real agent turn through the standard preset against the scripted provider.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Config, DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { openTestAgent } from "../support/test-agent.js";

let store: Store;
let fake: FakeProvider;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "bdsh-recorded-"));
  store = await openStore({ home });
  fake = await startFakeProvider({ script: [] });
});
afterAll(async () => {
  await fake.close();
  await store.close();
});

const results = (request: FakeRequest) =>
  ((request.body?.messages ?? []) as Array<{ role: string }>).filter((m) => m.role === "tool").length;

it("terminal answers are written as approval/* and question/* events, a throwing answerer as a deny", async () => {
  const workspace = mkdtempSync(join(tmpdir(), "bdsh-recorded-ws-"));
  mkdirSync(join(workspace, "build"));
  fake.setScript((request) => {
    switch (results(request)) {
      case 0:
        return {
          toolCalls: [
            { id: "c1", name: "bash", arguments: { command: "rm -rf build", description: "clean" } },
            {
              id: "c2",
              name: "ask_user_question",
              arguments: { questions: [{ question: "Which branch?" }] },
            },
          ],
        };
      case 2:
        return {
          toolCalls: [
            { id: "c3", name: "bash", arguments: { command: "rm -rf build", description: "again" } },
          ],
        };
      default:
        return { text: "done" };
    }
  });
  const config: Config = { ...DEFAULT_CONFIG, model: { ...DEFAULT_CONFIG.model, base_url: fake.url } };
  let approvals = 0;
  const { agent } = await openTestAgent({
    store,
    config,
    workspace,
    home,
    projectTrusted: false,
    toolOptions: {
      approvals: {
        request: async () => {
          approvals++;
          if (approvals === 1) return "allow-once";
          throw new Error("the terminal went away");
        },
      },
      questionAnswerer: { ask: async () => ["main"] },
    },
  });
  await agent.followup("clean up");
  await agent.whenIdle();
  await agent.close();
  const events = await store.read(agent.sessionId);
  const requested = events.filter(
    (e): e is LogEvent<"approval/requested"> => e.type === "approval/requested",
  );
  const answered = events.filter((e): e is LogEvent<"approval/answered"> => e.type === "approval/answered");
  expect(requested.map((e) => [e.data.callId, e.data.tool, e.data.summary])).toEqual([
    ["c1", "bash", "rm -rf build"],
    ["c3", "bash", "rm -rf build"],
  ]);
  expect(answered.map((e) => [e.data.id, e.data.decision])).toEqual([
    [requested[0]?.data.id, "allow-once"],
    [requested[1]?.data.id, "deny"],
  ]);
  const asked = events.find((e): e is LogEvent<"question/asked"> => e.type === "question/asked");
  const reply = events.find((e): e is LogEvent<"question/answered"> => e.type === "question/answered");
  expect(asked?.data.callId).toBe("c2");
  expect(reply?.data).toEqual({ id: asked?.data.id, answers: ["main"] });
});
