/**
 * docs/architecture.md's "imports point down", checked: every relative import of src/ and web/ follows the
 * layer table of scripts/check-layers.mjs (which `npm run lint` runs), and the check itself catches what it
 * should (a planted edge list), reads imports the way they are written, and knows every folder of src/.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { collectEdges, importsOf, LAYERS, violations } from "../../scripts/check-layers.mjs";

const root = join(import.meta.dirname, "..", "..");

describe("the layers of docs/architecture.md", () => {
  it("src/ and web/ import only downwards", () => {
    const edges = collectEdges(root);
    expect(edges.length).toBeGreaterThan(500);
    expect(violations(edges)).toEqual([]);
  });

  it("catches an import upwards, across plugins, of a store value into tools/, and of cli/ from web/", () => {
    const planted = [
      { from: "src/log/events.ts", to: "src/loop/agent.ts", typeOnly: true },
      { from: "src/planning/continuation.ts", to: "src/context/compaction/reinjection.ts", typeOnly: false },
      { from: "src/tools/jobs/receipts.ts", to: "src/store/store.ts", typeOnly: false },
      { from: "web/views/items.tsx", to: "src/cli/render/tool-card.ts", typeOnly: false },
      { from: "src/config/schema.ts", to: "src/model/types.ts", typeOnly: true },
      { from: "src/newfolder/x.ts", to: "src/log/events.ts", typeOnly: true },
    ];
    const allowedOnes = [
      { from: "src/tools/jobs/receipts.ts", to: "src/store/store.ts", typeOnly: true },
      { from: "src/config/schema.ts", to: "src/model/catalog.ts", typeOnly: false },
      { from: "src/model/adapter.ts", to: "src/model/catalog.ts", typeOnly: false },
      { from: "src/server/plugin.ts", to: "src/presets/open-agent.ts", typeOnly: false },
      { from: "web/types.ts", to: "src/server/schemas.ts", typeOnly: true },
      { from: "web/views/items.tsx", to: "web/api.ts", typeOnly: false },
    ];
    const found = violations([...planted, ...allowedOnes]);
    expect(found).toHaveLength(planted.length);
    expect(found[0]).toBe(
      "src/log/events.ts imports src/loop/agent.ts (types): log → loop/agent.ts is not allowed",
    );
    expect(found[5]).toContain("newfolder is not in the layer table");
  });

  it("reads multi-line, type-only, dynamic and module-augmenting imports, not those in comments", () => {
    const text = [
      'import {\n  a,\n  type B,\n} from "../x/a.js";',
      'import type { C } from "../x/c.js";',
      'import { type D, type E } from "../x/d.js";',
      'export { f } from "./f.js";',
      'const g = await import("../x/g.js");',
      'declare module "../tools/types.js" {}',
      '// import { h } from "../x/h.js";',
      '/* import { i } from "../x/i.js"; */',
      'import { z } from "zod";',
    ].join("\n");
    expect(importsOf(text)).toEqual([
      { specifier: "../x/a.js", typeOnly: false },
      { specifier: "../x/c.js", typeOnly: true },
      { specifier: "../x/d.js", typeOnly: true },
      { specifier: "./f.js", typeOnly: false },
      { specifier: "../x/g.js", typeOnly: false },
      { specifier: "../tools/types.js", typeOnly: true },
    ]);
  });

  it("places every folder of src/ in the table and in the doc's picture", () => {
    const folders = readdirSync(join(root, "src")).filter((name) =>
      statSync(join(root, "src", name)).isDirectory(),
    );
    const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");
    const picture = doc.slice(doc.indexOf("## Layers and folders"), doc.indexOf("Imports point down"));
    for (const folder of folders) {
      expect(LAYERS, folder).toHaveProperty([folder]);
      expect(picture, folder).toContain(`${folder}/`);
    }
  });
});
