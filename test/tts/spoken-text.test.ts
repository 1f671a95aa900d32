/** Issue 20 item 2: one cleaner on every spoken path (seed 000 streaming-tts.md). */
import { describe, expect, it } from "vitest";
import { CODE_BLOCK_ANNOUNCEMENT, spokenText } from "../../src/tts/spoken-text.js";

describe("spokenText", () => {
  it("reduces emphasis, headings and quotes to their words", () => {
    expect(spokenText("## Plan\n> **Bold** and *soft* and __strong__ and ~~gone~~ and _it_")).toBe(
      "Plan. Bold and soft and strong and gone and it",
    );
  });

  it("says a link's text and an image's description, not their URLs", () => {
    expect(spokenText("Read [the guide](https://example.com/guide?x=1) and ![a cat](cat.png).")).toBe(
      "Read the guide and a cat.",
    );
  });

  it("says a bare URL as its host", () => {
    expect(spokenText("Go to https://www.example.com/a/b?c=d. Or <https://docs.rs/x>.")).toBe(
      "Go to example.com. Or docs.rs.",
    );
  });

  it("announces a code block briefly instead of reading it; inline code keeps its text", () => {
    const out = spokenText("Use `npm test`:\n```ts\nconst secret = compute(1, 2);\n```\nThen stop.");
    expect(out).toBe(`Use npm test: ${CODE_BLOCK_ANNOUNCEMENT} Then stop.`);
    expect(out).not.toContain("compute");
  });

  it("announces an unclosed code block too", () => {
    expect(spokenText("```py\nprint(1)")).toBe(CODE_BLOCK_ANNOUNCEMENT);
  });

  it("reads list items as short sentences", () => {
    expect(spokenText("Steps:\n- install it\n- run it\n1. check\n- [x] done")).toBe(
      "Steps: install it. run it. check. done.",
    );
  });

  it("reads a table as its cells, a row a sentence", () => {
    expect(spokenText("| name | size |\n|:---|---:|\n| a.txt | 3 |")).toBe("name, size. a.txt, 3.");
  });

  it("drops emoji, ZWJ sequences, flags and HTML tags", () => {
    expect(spokenText("Done 🎉👍🏽 👩‍💻 🇩🇪 <b>now</b>&amp; then")).toBe("Done now & then");
  });

  it("never speaks reasoning", () => {
    expect(spokenText("<think>hidden</think>Visible. <think>also hidden")).toBe("Visible.");
  });

  it("keeps CJK text and ordinary punctuation", () => {
    expect(spokenText("你好，世界。")).toBe("你好，世界。");
  });

  it("returns an empty string when nothing is speakable", () => {
    expect(spokenText("  🎉\n\n---\n")).toBe("");
  });
});
