/**
 * Issue 32 deliver 1: the agent stores each result's `details` on `tool/result`, through the session's
 * redactor like every other field, and never sends them to the model. Real tools on a real workspace, real
 * stores (SQLite and PostgreSQL); the provider is the scripted fake, whose captured request bodies are what
 * the model would have read.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { REDACTED } from "../../src/log/redact.js";
import { eventJson } from "../../src/log/serialize.js";
import { openAgent } from "../../src/presets/open-agent.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, type FakeReply, startFakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";

const SECRET = "AKIAsecret-7c2e9a41f0b35d";

let fake: FakeProvider | undefined;
let store: Store | undefined;
afterEach(async () => {
  await fake?.close();
  await store?.close();
  fake = undefined;
  store = undefined;
});

const tool = (id: string, name: string, args: Record<string, unknown>): FakeReply => ({
  toolCalls: [{ id, name, arguments: args }],
});

async function runAgent(databaseUrl: string | undefined, script: FakeReply[]) {
  const workspace = mkdtempSync(join(tmpdir(), "bdsh-details-ws-"));
  // The secret sits on a line the edit does not touch: it reaches the diff only as context.
  writeFileSync(join(workspace, "settings.ini"), `mode = debug\nkey = ${SECRET}\nlevel = 1\n`);
  const home = mkdtempSync(join(tmpdir(), "bdsh-details-home-"));
  store = await openStore({ home, ...(databaseUrl ? { databaseUrl } : {}) });
  fake = await startFakeProvider({ script });
  const env = { PATH: process.env.PATH, HOME: home, BDSH_HOME: home, AWS_SECRET_ACCESS_KEY: SECRET };
  const { agent } = await openAgent({
    store,
    config: { ...DEFAULT_CONFIG, approval: "never" },
    workspace,
    home,
    env: { ...env, BDSH_BASE_URL: fake.url, DEEPSEEK_API_KEY: "sk-test-details-0000" },
    toolOptions: { home, env },
  });
  await agent.followup("tidy the settings");
  await agent.whenIdle();
  await agent.close();
  const stored = await store.read(agent.sessionId);
  const results = stored.filter((e): e is LogEvent<"tool/result"> => e.type === "tool/result");
  return { workspace, stored, results, byCall: new Map(results.map((e) => [e.data.callId, e.data])) };
}

const script: FakeReply[] = [
  tool("r1", "read", { file_path: "settings.ini" }),
  tool("e1", "edit", { file_path: "settings.ini", old_string: "mode = debug", new_string: "mode = quiet" }),
  tool("b1", "bash", { description: "Fail on purpose", command: "exit 3" }),
  tool("t1", "todo_write", { todos: [{ content: "tidy the settings", status: "completed" }] }),
  { text: "done" },
];

const backends: [string, () => string | undefined][] = [
  ["SQLite", () => undefined],
  ["PostgreSQL", () => testDatabaseUrl()],
];

for (const [name, url] of backends) {
  describe(`issue 32: tool details on tool/result (${name})`, () => {
    it("are stored with each result, a secret in an edit's diff redacted", async () => {
      const { stored, byCall, workspace } = await runAgent(url(), script);
      const path = join(workspace, "settings.ini");
      expect(byCall.get("r1")?.details).toEqual({
        kind: "read",
        path,
        startLine: 1,
        endLine: 3,
        totalLines: 3,
      });
      expect(byCall.get("e1")?.details).toEqual({
        kind: "file-change",
        path,
        change: "modified",
        added: 1,
        removed: 1,
        diff: [
          { kind: "@", text: "@@ -1,3 +1,3 @@" },
          { kind: "-", text: "mode = debug" },
          { kind: "+", text: "mode = quiet" },
          { kind: " ", text: `key = ${REDACTED}` },
          { kind: " ", text: "level = 1" },
        ],
      });
      expect(byCall.get("b1")?.details).toEqual({ kind: "command", exitCode: 3, truncated: false });
      expect(byCall.get("t1")?.details).toEqual({
        kind: "todos",
        items: [{ content: "tidy the settings", status: "completed" }],
      });
      expect(typeof byCall.get("b1")?.durationMs).toBe("number");
      // Nothing stored holds the secret: the rows as read back, in --json's serialization.
      expect(stored.map(eventJson).join("\n")).not.toContain(SECRET);
    });

    it("never reach the model: each request carries the results' texts, byte for byte, and nothing else", async () => {
      const { byCall } = await runAgent(url(), script);
      expect(fake!.requests).toHaveLength(5);
      const last = fake!.requests.at(-1)!;
      const toolMessages = (
        last.body as { messages: { role: string; tool_call_id?: string; content?: unknown }[] }
      ).messages.filter((m) => m.role === "tool");
      expect(toolMessages.map((m) => [m.tool_call_id, m.content])).toEqual(
        ["r1", "e1", "b1", "t1"].map((id) => [id, byCall.get(id)!.text]),
      );
      for (const request of fake!.requests) {
        for (const marker of [
          '"details"',
          "file-change",
          '"exitCode"',
          "totalLines",
          '"kind":"todos"',
          "durationMs",
        ])
          expect(request.rawBody).not.toContain(marker);
      }
    });
  });
}
