/**
 * Issue 16 item 4: some OpenAI-compatible servers number tool calls `call_0` in every reply. A repeated id
 * used to reach M8 on the next request ("duplicate tool call id") and end the turn; the assembler now makes
 * ids unique (`call_0-2`), keeps the provider's as `providerCallId`, and the unique id goes back in both
 * the assistant message and the tool result.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { findPairingError } from "../../src/log/pairing.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import { collectReply, type ProviderName } from "../../src/model/index.js";
import { type LoopFixture, loopFixture } from "../loop/harness.js";
import { adapterFor, closeFakes, fakeWith, request } from "./support.js";

let fixture: LoopFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  await closeFakes();
});

type WireMessage = { role: string; tool_call_id?: string; tool_calls?: { id: string }[] };

describe("issue 16 item 4: a reused tool-call id does not end the turn", () => {
  it("a server answering call_0 in two consecutive replies: the turn completes", async () => {
    fixture = await loopFixture({
      script: [
        { toolCalls: [{ id: "call_0", name: "echo", arguments: { text: "one" } }] },
        { toolCalls: [{ id: "call_0", name: "echo", arguments: { text: "two" } }] },
        { toolCalls: [{ id: "call_0", name: "echo", arguments: { text: "three" } }] },
        { text: "Done." },
      ],
      tools: { echo: { run: (args) => ({ text: `echo: ${String(args.text)}` }) } },
    });
    await fixture.agent.followup("echo thrice");
    await fixture.agent.whenIdle();
    const events = await fixture.events();
    const end = events.find((e) => e.type === "turn/end");
    expect(end?.type === "turn/end" && end.data).toEqual({ reason: "completed" });
    expect(events.some((e) => e.type === "agent/error")).toBe(false);
    expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();

    // The log: unique ids, the provider's kept where it was replaced.
    const calls = events
      .filter((e): e is LogEvent<"assistant/message"> => e.type === "assistant/message")
      .flatMap((e) => e.data.blocks.filter((b) => b.type === "tool-call"));
    expect(calls).toEqual([
      { type: "tool-call", id: "call_0", name: "echo", arguments: '{"text":"one"}' },
      {
        type: "tool-call",
        id: "call_0-2",
        name: "echo",
        arguments: '{"text":"two"}',
        providerCallId: "call_0",
      },
      {
        type: "tool-call",
        id: "call_0-3",
        name: "echo",
        arguments: '{"text":"three"}',
        providerCallId: "call_0",
      },
    ]);
    const results = events.filter((e): e is LogEvent<"tool/result"> => e.type === "tool/result");
    expect(results.map((e) => [e.data.callId, e.data.text])).toEqual([
      ["call_0", "echo: one"],
      ["call_0-2", "echo: two"],
      ["call_0-3", "echo: three"],
    ]);

    // The wire: each result names the id its assistant message used, and ids are unique in the request.
    const last = fixture.fake.requests[3]!.body as { messages: WireMessage[] };
    const assistantIds = last.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id));
    const resultIds = last.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
    expect(assistantIds).toEqual(["call_0", "call_0-2", "call_0-3"]);
    expect(resultIds).toEqual(assistantIds);
  });

  const WIRES: ProviderName[] = ["deepseek", "deepseek-anthropic"];
  for (const provider of WIRES) {
    it(`${provider}: ids are unique within one reply and against the history, deterministically`, async () => {
      const history = request([
        { role: "user", text: "go" },
        {
          role: "assistant",
          blocks: [
            { type: "tool-call", id: "call_0", name: "read", arguments: "{}" },
            { type: "tool-call", id: "call_0-2", name: "read", arguments: "{}" },
          ],
        },
        { role: "tool", callId: "call_0", name: "read", text: "a" },
        { role: "tool", callId: "call_0-2", name: "read", text: "b" },
      ]);
      const reply = {
        toolCalls: [
          { id: "call_0", name: "read", arguments: { path: "x" } },
          { id: "call_0", name: "read", arguments: { path: "y" } },
          { id: "call_9", name: "read", arguments: { path: "z" } },
        ],
      };
      const fake = await fakeWith([reply, reply]);
      const first = await collectReply(adapterFor(fake, provider).stream(history));
      const second = await collectReply(adapterFor(fake, provider).stream(history));
      const ids = (blocks: typeof first.blocks) =>
        blocks.map((b) =>
          b.type === "tool-call" ? [b.id, (b as { providerCallId?: string }).providerCallId] : [],
        );
      expect(ids(first.blocks)).toEqual([
        ["call_0-3", "call_0"],
        ["call_0-4", "call_0"],
        ["call_9", undefined],
      ]);
      expect(ids(second.blocks)).toEqual(ids(first.blocks));
    });
  }

  it("a call without an id repeats the history's call-<index> fallback: unique, no providerCallId", async () => {
    const fake = await fakeWith([{ toolCalls: [{ name: "read", arguments: {} }] }]);
    const history = request([
      { role: "user", text: "go" },
      { role: "assistant", blocks: [{ type: "tool-call", id: "call-0", name: "read", arguments: "{}" }] },
      { role: "tool", callId: "call-0", name: "read", text: "a" },
    ]);
    const parts: { type: string; id?: string; providerCallId?: string }[] = [];
    const reply = await collectReply(adapterFor(fake, "deepseek").stream(history), (part) =>
      parts.push(part),
    );
    expect(reply.blocks).toEqual([{ type: "tool-call", id: "call-0-2", name: "read", arguments: "{}" }]);
    expect(parts.find((p) => p.type === "tool-call")).toEqual({
      type: "tool-call",
      id: "call-0-2",
      name: "read",
      arguments: "{}",
    });
  });
});
