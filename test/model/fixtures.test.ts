/**
 * Issue 3, item 9: streams recorded from the real providers (../shared/fixtures/provider-streams) must
 * assemble to what each file's `expected` section says, when served in odd-sized pieces that split lines
 * and UTF-8 sequences.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { collectReply, type ModelPart } from "../../src/model/index.js";
import { adapterFor, closeFakes, fakeWith, request } from "./support.js";

afterEach(closeFakes);

const DIR = new URL("../../../shared/fixtures/provider-streams/", import.meta.url);

type Expected = {
  format: "openai-chat" | "anthropic-messages";
  text: string;
  reasoning: string;
  reasoningField: string | null;
  toolCalls: { id: string; name: string; arguments: unknown }[];
  finish: string;
  usage: { input: number; cacheRead: number; cacheWrite: number; output: number };
};

const index = JSON.parse(readFileSync(new URL("index.json", DIR), "utf8")) as { name: string }[];
const PIECES = [1, 3, 7, 2, 13, 64, 5, 211, 2, 997];

describe("recorded provider streams parse to their expected parts", () => {
  it("the fixture folder lists streams of both formats", () => {
    expect(index.length).toBeGreaterThanOrEqual(8);
  });

  for (const { name } of index) {
    it(name, async () => {
      const expected = JSON.parse(readFileSync(new URL(`${name}.expected.json`, DIR), "utf8")) as Expected;
      const raw = readFileSync(new URL(`${name}.sse`, DIR));
      const fake = await fakeWith([{ raw, rawChunkSizes: PIECES }]);
      const provider = expected.format === "openai-chat" ? "openai-compatible" : "anthropic";
      const parts: ModelPart[] = [];
      const reply = await collectReply(
        adapterFor(fake, provider).stream(request([{ role: "user", text: "q" }])),
        (p) => parts.push(p),
      );

      const text = reply.blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      const reasoningBlocks = reply.blocks.filter((b) => b.type === "reasoning");
      const reasoning = reasoningBlocks.map((b) => b.text).join("");
      expect(text).toBe(expected.text);
      expect(reasoning).toBe(expected.reasoning);
      // Live deltas add up to the same text.
      expect(parts.flatMap((p) => (p.type === "text" ? [p.delta] : [])).join("")).toBe(expected.text);
      expect(parts.flatMap((p) => (p.type === "reasoning" ? [p.delta] : [])).join("")).toBe(
        expected.reasoning,
      );
      if (expected.format === "openai-chat" && expected.reasoningField !== null) {
        for (const block of reasoningBlocks) expect(block.field).toBe(expected.reasoningField);
      }
      if (expected.format === "anthropic-messages" && expected.reasoning !== "") {
        expect(reasoningBlocks[0]?.signature).toMatch(/^E/);
      }
      const calls = reply.blocks.flatMap((b) => (b.type === "tool-call" ? [b] : []));
      expect(calls.map((c) => ({ id: c.id, name: c.name, arguments: JSON.parse(c.arguments) }))).toEqual(
        expected.toolCalls,
      );
      expect(reply.finish).toBe(expected.finish);
      expect(reply.usage).toMatchObject({
        inputTokens: expected.usage.input,
        cacheReadTokens: expected.usage.cacheRead,
        cacheWriteTokens: expected.usage.cacheWrite,
        outputTokens: expected.usage.output,
      });
      expect(parts.slice(-2).map((p) => p.type)).toEqual(["usage", "finish"]);
    });
  }
});
