/**
 * Shared pieces of the subagent tests: a scripted provider that answers by who is asking (the parent, or a
 * child by its task), and an agent opened with the standard preset against it.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Config, DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { OpenAgentOptions } from "../../src/presets/open-agent.js";
import type { Store } from "../../src/store/store.js";
import type { FakeReply, FakeRequest } from "../../testing/fake-provider/index.js";
import { openTestAgent as openScriptedAgent } from "../support/test-agent.js";

export type Message = { role: string; content?: unknown; tool_calls?: unknown[] };

export const messagesOf = (request: FakeRequest): Message[] =>
  ((request.body?.messages ?? []) as Message[]).map((m) => m);

export const textOf = (m: Message): string =>
  typeof m.content === "string"
    ? m.content
    : Array.isArray(m.content)
      ? (m.content as Array<{ text?: string }>).map((part) => part.text ?? "").join("")
      : "";

/** All user-message text of a request, joined. */
export const userText = (request: FakeRequest): string =>
  messagesOf(request)
    .filter((m) => m.role === "user")
    .map(textOf)
    .join("\n");

/** How many tool results the request carries after its last user message from a human or delegation. */
export const toolResultsSinceLastUser = (request: FakeRequest): number => {
  const messages = messagesOf(request);
  let last = -1;
  messages.forEach((m, i) => {
    if (m.role === "user") last = i;
  });
  return messages.slice(last + 1).filter((m) => m.role === "tool").length;
};

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function testConfig(baseUrl: string, patch: Partial<Config> = {}): Config {
  return {
    ...DEFAULT_CONFIG,
    ...patch,
    model: { ...DEFAULT_CONFIG.model, base_url: baseUrl },
    session: { ...DEFAULT_CONFIG.session, titles: false },
    sandbox_required: false,
  };
}

export async function openTestAgent(
  store: Store,
  baseUrl: string,
  extra: Partial<OpenAgentOptions> = {},
  config: Config = testConfig(baseUrl),
) {
  const home = mkdtempSync(join(tmpdir(), "bdsh-sa-home-"));
  const workspace = extra.workspace ?? mkdtempSync(join(tmpdir(), "bdsh-sa-ws-"));
  return openScriptedAgent({
    store,
    config,
    workspace,
    home,
    approval: "never",
    ...extra,
  });
}

export type Reply = FakeReply | Promise<FakeReply>;

/** The text of the request's last tool message ("" when it has none). */
export const lastToolMessage = (request: FakeRequest): string => {
  const tool = messagesOf(request).findLast((m) => m.role === "tool");
  return tool ? textOf(tool) : "";
};
