/**
 * Issue 20 item 5: the speaker behind `run --speak` and `chat --voice`, driven by a scripted agent (its
 * deltas and log events): replies are spoken turn by turn, a steer stops the audio of the turn, closing the
 * agent waits for the last sentence. Reasoning deltas are never spoken.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { speakAgentReplies } from "../../src/cli/speech.js";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { HookBus } from "../../src/hooks/hook-bus.js";
import type { EventType, LogEvent } from "../../src/log/events.js";
import type { LiveDelta } from "../../src/loop/agent.js";
import { parseWav } from "../../src/tts/pcm.js";
import { pieces, startWireServer, TEST_KEY, type WireServer } from "./wire-servers.js";

class ScriptedAgent {
  readonly hooks = new HookBus();
  private readonly deltas = new Set<(d: LiveDelta) => void>();
  private readonly listeners = new Set<(events: readonly LogEvent[]) => void>();
  private seq = 0;
  readonly events: LogEvent[] = [];
  readonly log = {
    events: this.events,
    last: <K extends EventType>(type: K) =>
      [...this.events].reverse().find((e) => e.type === type) as Extract<LogEvent, { type: K }> | undefined,
    onEvents: (listener: (events: readonly LogEvent[]) => void) => {
      this.listeners.add(listener);
      return () => this.listeners.delete(listener);
    },
  };
  onDelta(listener: (d: LiveDelta) => void): () => void {
    this.deltas.add(listener);
    return () => this.deltas.delete(listener);
  }
  delta(turn: number, delta: string, type: "text" | "reasoning" = "text"): void {
    for (const listener of this.deltas) listener({ type, delta, turn, step: 1 });
  }
  event(type: string, turn: number | undefined, data: unknown): void {
    const event = {
      sessionId: "s",
      seq: ++this.seq,
      type,
      at: "",
      ...(turn ? { turn } : {}),
      data,
    } as unknown as LogEvent;
    this.events.push(event);
    for (const listener of this.listeners) listener([event]);
  }
  reply(turn: number, text: string): void {
    this.event("turn/start", turn, {});
    this.delta(turn, "hidden reasoning. ", "reasoning");
    for (const piece of text.match(/[\s\S]{1,6}/g) ?? []) this.delta(turn, piece);
    this.event("assistant/message", turn, {
      blocks: [{ type: "text", text }],
      provider: "p",
      model: "m",
      finish: "stop",
    });
    this.event("turn/end", turn, { reason: "completed" });
  }
  close(): Promise<void> {
    return this.hooks.serial("agent/close", { sessionId: "s" });
  }
}

/** Waits for a condition (never for a time). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function output() {
  const lines: string[] = [];
  return { lines, out: (t: string) => void lines.push(t), err: (t: string) => void lines.push(t) };
}

describe("speakAgentReplies", () => {
  it("does nothing unless asked", () => {
    const agent = new ScriptedAgent();
    expect(
      speakAgentReplies(agent, {}, { config: DEFAULT_CONFIG, env: {}, output: output() }),
    ).toBeUndefined();
  });

  it("speaks each turn's reply into the WAV file; a steer stops that turn; close waits for the last audio", async () => {
    server = await startWireServer("openai", { chunks: () => pieces(Buffer.alloc(2400, 1)) });
    const config = structuredClone(DEFAULT_CONFIG);
    config.tts = {
      ...config.tts,
      provider: "openai",
      openai: { api_key: TEST_KEY, base_url: server.baseUrl },
    };
    const wav = join(mkdtempSync(join(tmpdir(), "bdsh-agent-speak-")), "out.wav");
    const agent = new ScriptedAgent();
    const o = output();
    const speech = speakAgentReplies(agent, { speak: wav }, { config, env: {}, output: o });
    expect(speech).toBeDefined();
    agent.reply(1, "First reply. It has two sentences.");
    agent.reply(2, "Second reply without a full stop");
    await until(() => (parseWav(readFileSync(wav))?.data.length ?? 0) >= 3 * 2400); // both replies were said
    // Turn 3 is steered: its audio stops, what was queued is dropped.
    agent.event("turn/start", 3, {});
    agent.delta(3, "Never said once the steer");
    agent.event("agent/inbox/spliced", undefined, {
      queue: "next-step",
      op: "add",
      items: [{ id: "i", mode: "steer", source: "user", text: "stop" }],
    });
    agent.event("turn/end", 3, { reason: "completed" });
    agent.reply(4, "Last words.");
    await agent.close(); // resolves once the last sentence is in the file
    const inputs = server.requests.map((r) => (r.body as { input: string }).input);
    expect(inputs).toEqual([
      "First reply.",
      "It has two sentences.",
      "Second reply without a full stop",
      "Last words.",
    ]);
    expect(parseWav(readFileSync(wav))?.data.length).toBe(4 * 2400);
    expect(o.lines.join("\n")).not.toContain(TEST_KEY);
  });
});
