/**
 * M10 and T22 end to end: `bdsh run --attach` of an image and a `read_image` call, through the real CLI,
 * the standard preset and the fake provider. Asserted on the request bodies the provider received: an
 * image goes as bytes in the request it first appears in and as its handle in every later one.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { runCli } from "../support/run-cli.js";

/** A 1×1 PNG (the attachment) and a GIF header (what read_image reads). */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const GIF = Buffer.from("GIF89a\x01\x00\x01\x00\x00\x00\x00;", "latin1");

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function workspaceWithImages(): string {
  const workspace = mkdtempSync(join(tmpdir(), "bdsh-images-ws-"));
  writeFileSync(join(workspace, "dot.png"), PNG);
  writeFileSync(join(workspace, "chart.gif"), GIF);
  return workspace;
}

function environment(url: string): NodeJS.ProcessEnv {
  return {
    BDSH_HOME: mkdtempSync(join(tmpdir(), "bdsh-images-home-")),
    BDSH_BASE_URL: url,
    OPENAI_API_KEY: "sk-test-images",
    DEEPSEEK_API_KEY: "sk-test-images",
  };
}

const SCRIPT = [
  { toolCalls: [{ id: "c1", name: "read_image", arguments: { file_path: "chart.gif" } }] },
  { toolCalls: [{ id: "c2", name: "read_image", arguments: { file_path: "missing.png" } }] },
  { text: "a dot and a chart" },
];

describe("M10 --attach and T22 read_image through bdsh run", () => {
  it("an image-capable model gets each image once as bytes, then its handle", async () => {
    fake = await startFakeProvider({ script: SCRIPT });
    const workspace = workspaceWithImages();
    const result = await runCli(
      ["run", "--provider", "openai", "--model", "gpt-test", "--attach", "dot.png", "what is this?"],
      environment(fake.url),
      workspace,
    );
    expect(result.stderr).toContain("✓ read_image chart.gif");
    expect(result.code).toBe(0);
    const [first, second, third] = fake.requests.map((r) => r.rawBody);
    const png = `data:image/png;base64,${PNG.toString("base64")}`;
    const gif = `data:image/gif;base64,${GIF.toString("base64")}`;
    expect(first).toContain(png);
    expect(first).toContain('"type":"image_url"');
    // The second request: the attachment only as its handle; the read_image result's image as bytes.
    expect(second).not.toContain(png);
    expect(second).toContain('[Image \\"dot.png\\" (image/png, ');
    expect(second).toContain(gif);
    // The third: both as handles.
    expect(third).not.toContain(png);
    expect(third).not.toContain(gif);
    expect(third).toContain('[Image \\"chart.gif\\" (image/gif, ');
    expect(third).toContain('cannot read \\"');
  });

  it("a text-only model gets the note with the saved path, and read_image answers with an error", async () => {
    fake = await startFakeProvider({ script: SCRIPT });
    const workspace = workspaceWithImages();
    const result = await runCli(
      ["run", "--attach", "dot.png", "what is this?"],
      environment(fake.url),
      workspace,
    );
    expect(result.code).toBe(0);
    const [first, second] = fake.requests.map((r) => r.rawBody);
    expect(first).not.toContain(PNG.toString("base64"));
    expect(first).toMatch(
      /image omitted because this model accepts text only; attachment sha256:[0-9a-f]{64}\. The image \\"dot\.png\\" was attached at \\"[^"\\]+dot\.png\\"; this model cannot view images/,
    );
    expect(second).toContain("Error: this model cannot view images, so");
    expect(second).not.toContain(GIF.toString("base64"));
  });
});
