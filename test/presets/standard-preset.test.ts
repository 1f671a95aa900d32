/**
 * The standard preset as a whole: every plugin's tools reach the model (T22), the tool list is the same
 * on every request (SP8), and the system prompt is one stable message.
 */

import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { openStore } from "../../src/store/open-store.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { openTestAgent } from "../support/test-agent.js";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe("standard preset", () => {
  it("offers the builtin, planning and skill tools, identically on every request", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-preset-"));
    mkdirSync(join(home, "skills", "release-notes"), { recursive: true });
    writeFileSync(
      join(home, "skills", "release-notes", "SKILL.md"),
      "---\nname: release-notes\ndescription: Write release notes from the git log.\n---\nRead the log, group by type.\n",
    );
    const workspace = mkdtempSync(join(tmpdir(), "bdsh-ws-"));
    fake = await startFakeProvider({
      script: [
        {
          toolCalls: [
            { id: "c1", name: "todo_write", arguments: { todos: [{ content: "a", status: "completed" }] } },
          ],
        },
        { text: "done" },
      ],
    });
    const store = await openStore({ home });
    const config = { ...DEFAULT_CONFIG, model: { ...DEFAULT_CONFIG.model, base_url: fake.url } };
    const { agent } = await openTestAgent({
      store,
      config,
      workspace,
      home,
    });
    await agent.followup("go");
    await agent.whenIdle();
    await agent.close();
    await store.close();
    const toolNames = fake.requests.map((r) =>
      ((r.body as { tools: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name),
    );
    for (const name of [
      "bash",
      "read",
      "write",
      "edit",
      "glob",
      "grep",
      "todo_write",
      "create_goal",
      "update_goal",
      "exit_plan_mode",
      "schedule_create",
      "skill",
    ]) {
      expect(toolNames[0]).toContain(name);
    }
    expect(toolNames[1]).toEqual(toolNames[0]);
    expect(new Set(toolNames[0]).size).toBe(toolNames[0]!.length); // no tool declared twice
    const messages = (fake.requests[0]!.body as { messages: Array<{ role: string }> }).messages;
    expect(messages.filter((m) => m.role === "system")).toHaveLength(1);
    expect(messages[0]!.role).toBe("system");
  });

  it("does not offer create_goal to a fork, a subagent or a Ralph session (their availability sees their kind)", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-preset-"));
    const workspace = mkdtempSync(join(tmpdir(), "bdsh-ws-"));
    fake = await startFakeProvider({ script: [{ text: "a" }, { text: "b" }, { text: "c" }, { text: "d" }] });
    const store = await openStore({ home });
    const config = { ...DEFAULT_CONFIG, model: { ...DEFAULT_CONFIG.model, base_url: fake.url } };
    const main = await store.createSession({ metadata: { workspace } });
    const offered: Record<string, string[]> = {};
    for (const kind of ["main", "fork", "subagent", "ralph"] as const) {
      const row =
        kind === "main"
          ? main
          : await store.createSession({ kind, parentId: main.id, metadata: { workspace } });
      const { agent } = await openTestAgent({
        store,
        config,
        workspace,
        home,
        sessionId: row.id,
      });
      const before = fake.requests.length;
      await agent.followup("go");
      await agent.whenIdle();
      await agent.close();
      const body = fake.requests[before]!.body as { tools: Array<{ function: { name: string } }> };
      offered[kind] = body.tools.map((t) => t.function.name);
    }
    await store.close();
    expect(offered.main).toContain("create_goal");
    for (const kind of ["fork", "subagent", "ralph"]) {
      expect(offered[kind]).not.toContain("create_goal");
      expect(offered[kind]).toContain("get_goal");
    }
  });
});
