/**
 * Chat's slash commands from one table: the menu's filter, Tab's completion, `/help`, the pickers `/model`
 * and `/resume` open without an argument, and an unknown command's answer.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ChatControl,
  type ChatModel,
  commandsMatching,
  completeCommand,
  type Picker,
  runSlashCommand,
  SLASH_COMMANDS,
  SLASH_HELP,
} from "../../../src/cli/chat/slash-commands.js";
import type { Effort } from "../../../src/model/types.js";
import { openStore } from "../../../src/store/open-store.js";
import type { Store } from "../../../src/store/store.js";

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function control(options: { pick?: boolean; model?: ChatModel } = {}) {
  const root = mkdtempSync(join(tmpdir(), "bdsh-slash-"));
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  store = await openStore({ home: join(root, "home") });
  const pickers: Picker[] = [];
  const switched: Array<{ id: string; effort?: Effort } | { session: string | undefined }> = [];
  const chat: ChatControl = {
    agent: () => undefined,
    store,
    workspace,
    model: () => options.model ?? { provider: "deepseek", id: "deepseek-flash", effort: "high" },
    usageLine: () => "",
    switchSession: async (ref) => {
      switched.push({ session: ref });
      return `continuing session ${ref}`;
    },
    switchModel: async (id, effort) => {
      switched.push({ id, ...(effort ? { effort } : {}) });
      return `model ${id}`;
    },
    ...(options.pick === false ? {} : { pick: (picker: Picker) => pickers.push(picker) }),
    exit: () => undefined,
  };
  return { chat, pickers, switched, workspace, store };
}

describe("slash commands", () => {
  it("the menu filters the one table by what is typed; a space or a second line closes it", () => {
    expect(commandsMatching("/")?.map((c) => c.name)).toEqual(SLASH_COMMANDS.map((c) => c.name));
    expect(commandsMatching("/mo")?.map((c) => c.name)).toEqual(["/model"]);
    expect(commandsMatching("/zz")).toEqual([]);
    expect(commandsMatching("/model x")).toBeUndefined();
    expect(commandsMatching("hello /mo")).toBeUndefined();
    for (const command of SLASH_COMMANDS) {
      expect(SLASH_HELP).toContain(command.name);
      expect(SLASH_HELP).toContain(command.help);
    }
  });

  it("Tab completes a unique prefix with a space, and a prefix several share as far as they agree", () => {
    expect(completeCommand("/mo")).toBe("/model ");
    expect(completeCommand("/c")).toBe("/co"); // /cost and /compact
    expect(completeCommand("/co")).toBeUndefined();
    expect(completeCommand("/zz")).toBeUndefined();
    expect(completeCommand("plain text")).toBeUndefined();
  });

  it("an unknown command names itself and points to /help, not to /goal's usage", async () => {
    const { chat } = await control();
    const reply = await runSlashCommand("/x", chat);
    expect(reply).toBe("unknown command /x — /help lists the commands");
  });

  it("/model opens the provider's models, then its effort levels; the choice switches as /model ID does", async () => {
    const { chat, pickers, switched } = await control();
    expect(await runSlashCommand("/model", chat)).toBe("");
    const models = pickers[0] as Picker;
    expect(models.items.map((i) => i.label)).toEqual(["deepseek-flash", "deepseek-v4-pro"]);
    expect(models.selected).toBe(0);
    expect(await models.choose(1)).toBeUndefined();
    const efforts = pickers[1] as Picker;
    expect(efforts.items.map((i) => i.label)).toEqual(["off", "low", "high", "max"]);
    expect(efforts.selected).toBe(2); // the current effort
    expect(await efforts.choose(1)).toBe("model deepseek-v4-pro");
    expect(switched).toEqual([{ id: "deepseek-v4-pro", effort: "low" }]);
    // Typed: the same switch; a wrong effort is a usage line.
    await runSlashCommand("/model deepseek-flash max", chat);
    expect(switched.at(-1)).toEqual({ id: "deepseek-flash", effort: "max" });
    expect(await runSlashCommand("/model deepseek-flash extreme", chat)).toContain("usage: /model <id>");
  });

  it("/model for a local server: no effort levels, the current model offered; without a picker, a list", async () => {
    const local = { provider: "openai-compatible", id: "qwen-local", effort: "high" as const };
    const { chat, pickers, switched } = await control({ model: local });
    await runSlashCommand("/model", chat);
    expect(pickers[0]?.items.map((i) => i.label)).toEqual(["qwen-local"]);
    expect(await pickers[0]?.choose(0)).toBe("model qwen-local");
    expect(switched).toEqual([{ id: "qwen-local" }]);
    const plain = await control({ pick: false });
    const listed = await runSlashCommand("/model", plain.chat);
    expect(listed).toContain("known models: deepseek-flash, deepseek-v4-pro");
    expect(listed).toContain("effort levels: off, low, high, max");
  });

  it("/resume without an id picks among this workspace's sessions, last active first", async () => {
    const { chat, pickers, switched, workspace, store } = await control();
    expect(await runSlashCommand("/resume", chat)).toBe(`No sessions in ${workspace} yet.`);
    const older = await store.createSession({ title: "older", metadata: { workspace } });
    await store.createSession({ title: "newer", metadata: { workspace } });
    await store.createSession({ title: "elsewhere", metadata: { workspace: "/elsewhere" } });
    const created = Date.now();
    while (Date.now() <= created + 1) {
      // the next millisecond, so the older session's activity is the latest
    }
    await store.append(older.id, [{ type: "user/message", data: { text: "again", source: "human" } }], 0);
    expect(await runSlashCommand("/resume", chat)).toBe("");
    const picker = pickers[0] as Picker;
    expect(picker.items.map((i) => i.label.split("  ").at(-1))).toEqual(["older", "newer"]);
    await picker.choose(0);
    expect(switched).toEqual([{ session: older.id }]);
  });
});
