/**
 * T22 `read_image` (M10): an image-capable model gets the image's handle (and, through the surface, the
 * image itself on the next request); any other model a clear error. Paths follow the file sandbox: the
 * workspace and the attachments folder, never the rest of `$BDSH_HOME`.
 */
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { saveImage } from "../../src/context/attachments.js";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { imageHandlesIn } from "../../src/log/messages.js";
import { readImageTool } from "../../src/tools/files/read-image.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { SandboxMode } from "../../src/tools/types.js";
import { call, makeExec, tempDir } from "./support.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

const outside = tempDir("bdsh-outside-", "/var/tmp");
afterAll(() => rmSync(outside, { recursive: true, force: true }));

function setup(options: { images?: boolean; sandbox?: SandboxMode; maxBytes?: number } = {}) {
  const workspace = tempDir();
  const home = tempDir("bdsh-home-");
  const registry = new ToolRegistry();
  registry.register(
    readImageTool({
      home,
      images: options.images ?? true,
      save: (name, data, mediaType) => saveImage(home, name, data, mediaType),
      ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}),
    }),
  );
  const ctx = makeExec({ workspace, sandbox: options.sandbox ?? "workspace-write" });
  const pipeline = new ToolPipeline({ registry, hooks: new HookBus() });
  const readImage = (filePath: string) => pipeline.run(call("read_image", { file_path: filePath }), ctx.exec);
  return { workspace, home, readImage };
}

describe("T22 read_image", () => {
  it("returns the handle of a saved copy for an image-capable model", async () => {
    const { workspace, home, readImage } = setup();
    writeFileSync(join(workspace, "dot.png"), PNG);
    const output = await readImage("dot.png");
    expect(output.isError).toBeFalsy();
    const [found] = imageHandlesIn(output.text);
    expect(found?.image).toMatchObject({ name: "dot.png", mediaType: "image/png", bytes: PNG.byteLength });
    expect(found!.image.path.startsWith(join(home, "attachments", found!.image.sha256))).toBe(true);
    expect(readFileSync(found!.image.path)).toEqual(PNG);
    expect(output.text).toContain("shown with the next request only");
    expect(output.details).toEqual({
      kind: "image",
      path: join(workspace, "dot.png"),
      mimeType: "image/png",
      bytes: PNG.byteLength,
    });
  });

  it("reads an attachment by its saved path or by its handle", async () => {
    const { home, readImage } = setup();
    const saved = saveImage(home, "shot.png", PNG, "image/png");
    expect(imageHandlesIn((await readImage(saved.path)).text)[0]?.image.sha256).toBe(saved.sha256);
    const byHandle = await readImage(
      `[Image "shot.png" (image/png, ${PNG.byteLength} bytes, sha256:${saved.sha256}) saved at "${saved.path}"]`,
    );
    expect(imageHandlesIn(byHandle.text)[0]?.image.path).toBe(saved.path);
  });

  it("tells a text-only model it cannot view images, without reading", async () => {
    const { workspace, readImage } = setup({ images: false });
    writeFileSync(join(workspace, "dot.png"), PNG);
    const output = await readImage("dot.png");
    expect(output.isError).toBe(true);
    expect(output.text).toBe(
      `Error: this model cannot view images, so "${workspace}/dot.png" was not read. Work from the file's name and what the user said about it, or ask the user to describe it.`,
    );
  });

  it("refuses paths outside the workspace, through a symlink too, and anything else in $BDSH_HOME", async () => {
    const { workspace, home, readImage } = setup();
    writeFileSync(join(outside, "far.png"), PNG);
    expect((await readImage(join(outside, "far.png"))).text).toBe(
      `Error: cannot read "${outside}/far.png": outside the workspace and the attachments folder`,
    );
    symlinkSync(join(outside, "far.png"), join(workspace, "link.png"));
    expect((await readImage("link.png")).text).toBe(
      `Error: cannot read "${workspace}/link.png": outside the workspace and the attachments folder`,
    );
    mkdirSync(join(home, "sessions"));
    writeFileSync(join(home, "sessions", "x.png"), PNG);
    expect((await readImage(join(home, "sessions", "x.png"))).text).toBe(
      `Error: cannot read "${home}/sessions/x.png": the harness's home folder is not readable by tools`,
    );
  });

  it("under danger-full-access reads outside the workspace, but still never $BDSH_HOME", async () => {
    const { home, readImage } = setup({ sandbox: "danger-full-access" });
    writeFileSync(join(outside, "free.png"), PNG);
    expect((await readImage(join(outside, "free.png"))).isError).toBeFalsy();
    writeFileSync(join(home, "config.png"), PNG);
    expect((await readImage(join(home, "config.png"))).text).toContain(
      "home folder is not readable by tools",
    );
  });

  it("refuses an image over the size cap", async () => {
    const { workspace, readImage } = setup({ maxBytes: 64 });
    writeFileSync(join(workspace, "big.png"), Buffer.concat([PNG, Buffer.alloc(100)]));
    expect((await readImage("big.png")).text).toBe(
      `Error: "${workspace}/big.png" is ${PNG.byteLength + 100} bytes; read_image takes images up to 64 bytes`,
    );
  });

  it("refuses a file that is not an image by its magic bytes, whatever its name", async () => {
    const { workspace, readImage } = setup();
    writeFileSync(join(workspace, "fake.png"), "not a picture");
    expect((await readImage("fake.png")).text).toBe(
      `Error: "${workspace}/fake.png" is not a PNG, JPEG, GIF or WebP image`,
    );
    expect((await readImage("missing.png")).text).toBe(
      `Error: cannot read "${workspace}/missing.png": not found`,
    );
  });
});
