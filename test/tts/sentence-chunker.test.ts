/** Issue 20 item 1 (seed 000 streaming-tts.md "Sentence chunker"). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SentenceChunker } from "../../src/tts/sentence-chunker.js";
import { spokenText } from "../../src/tts/spoken-text.js";

function chunk(deltas: readonly string[], maxChars?: number): string[] {
  const chunker = new SentenceChunker(maxChars === undefined ? {} : { maxChars });
  const out: string[] = [];
  for (const delta of deltas) out.push(...chunker.push(delta));
  out.push(...chunker.end());
  return out;
}

/** The reference: the text without its think blocks (an unclosed one hides the rest). */
function withoutThink(text: string): string {
  return text.replace(/<think>[\s\S]*?(?:<\/think>|$)/gi, "");
}

function splitAt(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let last = 0;
  for (const p of points) {
    out.push(text.slice(last, p));
    last = p;
  }
  out.push(text.slice(last));
  return out;
}

const sentences = (pieces: string[]) => pieces.map((p) => p.trim()).filter((p) => p !== "");

describe("sentence chunker (Hermes streaming TTS)", () => {
  it("flushes each sentence as soon as the next character shows it is complete", () => {
    const chunker = new SentenceChunker();
    expect(chunker.push("Hello there.")).toEqual([]);
    expect(chunker.push(" How")).toEqual(["Hello there."]);
    expect(chunker.push(" are you? Fine")).toEqual([" How are you?"]);
    expect(chunker.end()).toEqual([" Fine"]);
  });

  it("ends sentences at . ! ? … and at a blank line", () => {
    expect(sentences(chunk(["One. Two! Three? Four… Five\n\nSix"]))).toEqual([
      "One.",
      "Two!",
      "Three?",
      "Four…",
      "Five",
      "Six",
    ]);
  });

  it("ends CJK and full-width sentences at 。！？ without a space", () => {
    expect(sentences(chunk(["你好。今天天气很好！", "你呢？好"]))).toEqual([
      "你好。",
      "今天天气很好！",
      "你呢？",
      "好",
    ]);
  });

  it("keeps decimals, abbreviations, initials, list numbers and URLs inside the sentence", () => {
    const text =
      "Pi is 3.14 today. Mr. Smith and Dr. Who met J. Doe, e.g. at noon. See https://example.com/a.b?c=1 now.\n1. First step.";
    expect(sentences(chunk([text]))).toEqual([
      "Pi is 3.14 today.",
      "Mr. Smith and Dr. Who met J. Doe, e.g. at noon.",
      "See https://example.com/a.b?c=1 now.",
      "1. First step.",
    ]);
  });

  it("keeps closing quotes and brackets with their sentence", () => {
    expect(sentences(chunk(['He said "stop." Then (he left.) Done']))).toEqual([
      'He said "stop."',
      "Then (he left.)",
      "Done",
    ]);
  });

  it("strips a <think> block even when both tags are split across deltas", () => {
    const deltas = ["Hi <", "th", "ink>secret plan. Do not", " say</th", "ink>there. ", "Bye."];
    const out = chunk(deltas);
    expect(out.join("")).toBe("Hi there. Bye.");
    expect(out.join("")).not.toContain("secret");
  });

  it("never speaks an unclosed <think> block", () => {
    expect(chunk(["Answer. <think>still thinking. more"]).join("")).toBe("Answer. ");
  });

  it("lets a lone < that starts no tag through", () => {
    expect(chunk(["a <", " b. <th", "eory"]).join("")).toBe("a < b. <theory");
  });

  it("keeps a fenced code block whole, as one piece", () => {
    const text = "Run this:\n```sh\necho 1. two! three?\n\nls\n```\nDone.";
    const out = chunk([text]);
    expect(out).toContain("```sh\necho 1. two! three?\n\nls\n```\n");
  });

  it("cuts a 5,000-character sentence without punctuation at word boundaries within the limit", () => {
    const words = Array.from({ length: 1001 }, (_, i) => `w${i % 10}xy`).join(" ");
    expect(words.length).toBeGreaterThanOrEqual(5000);
    const out = chunk([words], 300);
    expect(chunk(Array.from(words), 300)).toEqual(out); // streamed a character at a time
    expect(out.join("")).toBe(words);
    for (const piece of out) expect(piece.length).toBeLessThanOrEqual(300);
    for (const piece of out.slice(1)) expect(piece.startsWith(" ")).toBe(true); // cut at a space, not in a word
  });

  it("reads a long code block streamed in small deltas once (it stays one piece)", () => {
    const code = `\`\`\`ts\n${"const value = compute(1, 2);\n".repeat(1500)}\`\`\`\n`;
    const deltas = code.match(/[\s\S]{1,5}/g) ?? [];
    expect(chunk([...deltas, "Done."])).toEqual([code, "Done."]);
  });

  it("cuts a run-on at its last clause mark when it has one", () => {
    const text = `${"a".repeat(50)}, ${"b ".repeat(40)}`;
    expect(chunk([text], 60)[0]).toBe(`${"a".repeat(50)},`);
  });

  it("cuts a spaceless run hard at the limit without splitting a surrogate pair", () => {
    const text = "😀".repeat(100);
    const out = chunk([text], 51);
    expect(out.join("")).toBe(text);
    for (const piece of out) expect(piece).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
  });
});

const alphabet = [
  "a",
  "b",
  " ",
  ".",
  "!",
  "?",
  "…",
  "。",
  "！",
  "？",
  "\n",
  ",",
  "3",
  "Mr",
  "e.g",
  "<",
  ">",
  "/",
  "think",
  "<think>",
  "</think>",
  "`",
  "```",
  "你",
  "😀",
  '"',
  ")",
  "http://x.io/a.b",
];
const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 80 }).map((parts) => parts.join(""));

describe("sentence chunker properties (Hermes streaming TTS)", () => {
  it("any split of the same text into deltas yields the same sentences", () => {
    fc.assert(
      fc.property(
        text,
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.integer({ min: 8, max: 60 }),
        (t, cuts, max) => {
          expect(chunk(splitAt(t, cuts), max)).toEqual(chunk([t], max));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("the concatenated sentences equal the text without its think blocks", () => {
    fc.assert(
      fc.property(
        text,
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.integer({ min: 8, max: 60 }),
        (t, cuts, max) => {
          expect(chunk(splitAt(t, cuts), max).join("")).toBe(withoutThink(t));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("nothing inside a think block is ever in a spoken sentence", () => {
    const inside = text.filter((t) => !/<\/think>/i.test(t)); // a closing tag would end the block early
    fc.assert(
      fc.property(
        text,
        inside,
        text,
        fc.array(fc.nat(), { maxLength: 12 }),
        (before, secret, after, cuts) => {
          const t = `${before}<think>${secret}SECRET${secret}</think>${after}`;
          const spoken = chunk(splitAt(t, cuts)).map(spokenText).join(" ");
          expect(spoken).not.toContain("SECRET");
        },
      ),
      { numRuns: 300 },
    );
  });

  it("no piece outside a code fence is longer than the limit", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 8, max: 60 }), (t, max) => {
        for (const piece of chunk([t], max))
          if (!/```/.test(piece)) expect(piece.length).toBeLessThanOrEqual(max);
      }),
      { numRuns: 300 },
    );
  });
});
