import { afterEach, describe, expect, it, vi } from "vitest";
import { findPairingError } from "../../src/log/pairing.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import { sessionLeaseName } from "../../src/store/store.js";
import { type LoopFixture, loopFixture, types } from "./harness.js";

let fixture: LoopFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe("L1 turn and step machine", () => {
  it("runs a tool step then a text step, and ends the turn completed", async () => {
    fixture = await loopFixture({
      script: [
        { reasoning: "look", toolCalls: [{ id: "c1", name: "echo", arguments: { text: "hi" } }] },
        { text: "All done." },
      ],
      tools: { echo: { run: (args) => ({ text: `echo: ${String(args.text)}` }) } },
    });
    await fixture.agent.followup("say hi");
    await fixture.agent.whenIdle();
    const events = await fixture.events();
    expect(types(events)).toEqual([
      "agent/status",
      "turn/start",
      "system/message",
      "agent/inbox/spliced",
      "user/message",
      "step/start",
      "request/header",
      "request/context",
      "assistant/message",
      "tool/call",
      "tool/result",
      "step/end",
      "step/start",
      "assistant/message",
      "step/end",
      "turn/end",
      "agent/status",
    ]);
    const end = events.find((e) => e.type === "turn/end");
    expect(end?.type === "turn/end" && end.data.reason).toBe("completed");
    expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // M6: the second request carries the first reply's reasoning back.
    const second = fixture.fake.requests[1]!.body as { messages: Array<Record<string, unknown>> };
    const assistant = second.messages.find((m) => m.role === "assistant");
    expect(assistant?.reasoning_content).toBe("look");
  });

  it("ends a drive with one append: the idle status, and the lease let go in the same statement", async () => {
    fixture = await loopFixture({ script: [{ text: "Hello." }] });
    const append = vi.spyOn(fixture.store, "append");
    const release = vi.spyOn(fixture.store, "releaseLease");
    await fixture.agent.followup("hi");
    await fixture.agent.whenIdle();
    // Step 1's pre-request flush, the turn's end (to disk, before its hooks: L17), then the drive's last.
    expect(append).toHaveBeenCalledTimes(3);
    const last = append.mock.calls.at(-1)!;
    expect(last[1].map((e) => e.type)).toEqual(["agent/status"]);
    expect(last[3]).toMatchObject({ releaseLease: true, durability: "commit" });
    expect(append.mock.calls.filter((call) => call[3]?.releaseLease)).toHaveLength(1);
    expect(release).not.toHaveBeenCalled();
    expect(await fixture.store.getLease(sessionLeaseName(fixture.sessionId))).toBeUndefined();
    const events = await fixture.events();
    expect(events.at(-1)).toMatchObject({ type: "agent/status", data: { status: "idle" } });
    // The next message is driven at once (the lease is free), by this agent or any other.
    await fixture.agent.followup("again");
    await fixture.agent.whenIdle();
    expect((await fixture.events()).filter((e) => e.type === "turn/end")).toHaveLength(2);
  });
});
