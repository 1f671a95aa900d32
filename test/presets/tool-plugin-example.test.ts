/**
 * The tool plugin of docs/tool-plugin.md, as written there: one file that imports only the library's surface
 * (nothing of loop/ internals or store/), registered with `openAgent({ plugins })`, is offered with the
 * standard tools and declared as its TypeBox schema says.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { openTestAgent } from "../support/test-agent.js";
import { wordCountPlugin } from "./fixtures/word-count-plugin.js";

const root = join(import.meta.dirname, "..", "..");
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
});

describe("a tool plugin in one file", () => {
  it("is the example in docs/tool-plugin.md, word for word", () => {
    const example = readFileSync(join(import.meta.dirname, "fixtures", "word-count-plugin.ts"), "utf8");
    const doc = readFileSync(join(root, "docs", "tool-plugin.md"), "utf8");
    expect(doc).toContain(example.replace('"../../../src/index.js"', '"better-dsh"').trim());
    expect(example.match(/from "([^"]+)"/g)).toEqual(['from "../../../src/index.js"']);
  });

  it("is offered after the standard tools, declared as its schema says", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-tool-plugin-"));
    store = await openStore({ home });
    const { agent } = await openTestAgent({
      store,
      config: DEFAULT_CONFIG,
      workspace: home,
      home,
      plugins: [wordCountPlugin],
    });
    const declarations = agent.tools.declarations();
    expect(declarations.at(-1)).toEqual({
      name: "word_count",
      description: "Count the words of a text.",
      parameters: {
        type: "object",
        properties: { text: { type: "string", description: "The text whose words to count." } },
        required: ["text"],
        additionalProperties: false,
      },
    });
    expect(declarations.map((d) => d.name)).toContain("bash");
    await agent.close();
  });
});
