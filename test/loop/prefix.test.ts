/**
 * M23, L12, L13: every request extends the previous one byte for byte, including when the working
 * directory, the file policy and the approval policy change mid-session (they arrive as new user messages,
 * never as edits of the system prompt or of earlier messages).
 */
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { standardPlugins } from "../../src/presets/standard.js";
import { type LoopFixture, loopFixture } from "./harness.js";

let fixture: LoopFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

type Body = { messages: unknown[]; tools?: unknown };

function extendsPrevious(previous: Body, next: Body): boolean {
  if (JSON.stringify(previous.tools) !== JSON.stringify(next.tools)) return false;
  if (next.messages.length < previous.messages.length) return false;
  return previous.messages.every((m, i) => JSON.stringify(m) === JSON.stringify(next.messages[i]));
}

describe("M23 prefix reuse across runtime-context changes", () => {
  it("each request's messages extend the previous request's byte for byte", async () => {
    let step = 0;
    fixture = await loopFixture({
      script: (_request, index) =>
        index < 5
          ? {
              reasoning: `r${index}`,
              toolCalls: [{ id: `c${index}`, name: "noop", arguments: { n: index } }],
            }
          : { text: "done" },
      tools: {
        noop: {
          run: () => {
            step++;
            const facts = fixture!.agent.facts;
            if (step === 1) facts.cwd = `${facts.cwd}/sub`;
            if (step === 2) facts.sandbox = "read-only";
            if (step === 3) facts.approval = "never";
            return { text: `ok ${step}` };
          },
        },
      },
      registry: true,
      plugins: standardPlugins({ config: DEFAULT_CONFIG }),
    });
    await fixture.agent.followup("work");
    await fixture.agent.whenIdle();
    await fixture.agent.followup("and again");
    await fixture.agent.whenIdle();
    const bodies = fixture.fake.requests.map((r) => r.body as Body);
    expect(bodies.length).toBe(7);
    for (let i = 1; i < bodies.length; i++) expect(extendsPrevious(bodies[i - 1]!, bodies[i]!)).toBe(true);
    const contexts = bodies
      .at(-1)!
      .messages.filter(
        (m) =>
          (m as { role: string; content: unknown }).role === "user" &&
          String((m as { content: unknown }).content).startsWith("Runtime context"),
      );
    // The first snapshot plus one per change (cwd, sandbox, approval).
    expect(contexts).toHaveLength(4);
    const system = (bodies[0]!.messages[0] as { role: string }).role;
    expect(system).toBe("system");
  });
});
