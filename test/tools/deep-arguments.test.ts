/**
 * Tool arguments are the model's output, so untrusted: arguments nested far deeper than any tool's schema,
 * or larger than any call needs, are refused as the call's result (the model reads why and can retry),
 * never as a crash of the step. Driven through the standard preset, every plugin on the hooks.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import { MAX_ARGUMENT_DEPTH, MAX_ARGUMENTS_BYTES, parseToolArguments } from "../../src/tools/arguments.js";
import { type FakeProvider, type FakeScript, startFakeProvider } from "../../testing/fake-provider/index.js";
import { openTestAgent } from "../support/test-agent.js";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function runOne(rawArguments: string, name = "todo_write"): Promise<LogEvent[]> {
  const home = mkdtempSync(join(tmpdir(), "bdsh-deep-"));
  const workspace = mkdtempSync(join(tmpdir(), "bdsh-ws-"));
  const script: FakeScript = [
    { toolCalls: [{ id: "c1", name, arguments: rawArguments }], chunkSize: 65_536 },
    { text: "understood" },
  ];
  fake = await startFakeProvider({ script });
  const store = await openStore({ home });
  const config = {
    ...DEFAULT_CONFIG,
    model: { ...DEFAULT_CONFIG.model, base_url: fake.url },
    session: { titles: false },
  };
  const { agent } = await openTestAgent({
    store,
    config,
    workspace,
    home,
  });
  try {
    await agent.followup("go");
    await agent.whenIdle();
    return await store.read(agent.sessionId);
  } finally {
    await agent.close();
    await store.close();
  }
}

function nested(depth: number): string {
  return `{"todos":${"[".repeat(depth)}${"]".repeat(depth)}}`;
}

describe("T2 deep or huge tool arguments", () => {
  it("arguments nested 200,000 deep are the call's error result and the turn goes on", async () => {
    const events = await runOne(nested(200_000));
    const result = events.find((e) => e.type === "tool/result");
    expect(result?.type === "tool/result" && result.data.isError).toBe(true);
    expect(result?.type === "tool/result" ? result.data.text : "").toContain(
      `nested more than ${MAX_ARGUMENT_DEPTH} levels deep`,
    );
    expect(events.some((e) => e.type === "agent/error")).toBe(false);
    const end = events.findLast((e) => e.type === "turn/end");
    expect(end?.type === "turn/end" && end.data.reason).toBe("completed");
    expect(fake?.requests).toHaveLength(2); // the model saw the refusal and answered
  });

  it("arguments just inside the depth bound reach the tool's own validation", async () => {
    const events = await runOne(nested(MAX_ARGUMENT_DEPTH - 1));
    const result = events.find((e) => e.type === "tool/result");
    expect(result?.type === "tool/result" ? result.data.text : "").toContain("invalid arguments");
    expect(result?.type === "tool/result" ? result.data.text : "").not.toContain("levels deep");
  });

  it("arguments over the size bound are the call's error result, naming the bound", async () => {
    const events = await runOne(JSON.stringify({ todos: [{ content: "x".repeat(MAX_ARGUMENTS_BYTES) }] }));
    const result = events.find((e) => e.type === "tool/result");
    expect(result?.type === "tool/result" && result.data.isError).toBe(true);
    expect(result?.type === "tool/result" ? result.data.text : "").toContain(`${MAX_ARGUMENTS_BYTES} bytes`);
    const end = events.findLast((e) => e.type === "turn/end");
    expect(end?.type === "turn/end" && end.data.reason).toBe("completed");
  });

  it("brackets inside strings are text, not nesting: a file full of them is written as is", () => {
    const content = `"[{\\"${"[{".repeat(MAX_ARGUMENT_DEPTH * 2)}`;
    const args = parseToolArguments(JSON.stringify({ path: "a.txt", content }));
    expect(args?.content).toBe(content);
  });
});
