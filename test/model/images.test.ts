/**
 * M10 on the wire: an image is sent as bytes in the request it first appears in, as its handle afterwards,
 * and as the text-only note to a model that cannot view images. Asserted on the body the fake provider
 * received, for both wire formats; the messages come from log events through the surface projection.
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { saveImage } from "../../src/context/attachments.js";
import type { LogEvent } from "../../src/log/events.js";
import { type ImageRef, imageHandleText, type SurfaceMessage } from "../../src/log/messages.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import { sniffImageType } from "../../src/model/images.js";
import type { ProviderName } from "../../src/model/index.js";
import { adapterFor, closeFakes, drain, fakeWith, request } from "./support.js";

afterEach(closeFakes);

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const PNG_BASE64 = PNG.toString("base64");

function savedPng(): ImageRef {
  const home = mkdtempSync(join(tmpdir(), "bdsh-img-"));
  return saveImage(home, "dot.png", PNG, "image/png");
}

let seq = 0;
function event(type: LogEvent["type"], data: unknown): LogEvent {
  return { sessionId: "s", seq: ++seq, type, at: "2026-01-01T00:00:00Z", data } as LogEvent;
}

function userWith(image: ImageRef, source = "human"): LogEvent {
  return event("user/message", { text: `what is in this?\n\n${imageHandleText(image)}`, source });
}

function assistant(text: string, toolCall?: { id: string; name: string; arguments: string }): LogEvent {
  return event("assistant/message", {
    blocks: [{ type: "text", text }, ...(toolCall ? [{ type: "tool-call", ...toolCall }] : [])],
    provider: "openai",
    model: "test-model",
    finish: toolCall ? "tool-calls" : "stop",
  });
}

/** An attached image the model has answered, and the next question. */
function answeredImage(image: ImageRef): LogEvent[] {
  return [userWith(image), assistant("a dot"), event("user/message", { text: "and now?", source: "human" })];
}

/** A step that called read_image, with the result not yet answered by the model. */
function readImageExchange(image: ImageRef): LogEvent[] {
  return [
    event("user/message", { text: "look at dot.png", source: "human" }),
    assistant("", { id: "c1", name: "read_image", arguments: '{"file_path":"dot.png"}' }),
    event("tool/result", { callId: "c1", name: "read_image", text: imageHandleText(image) }),
  ];
}

async function bodyFor(provider: ProviderName, messages: SurfaceMessage[], images?: boolean) {
  const fake = await fakeWith([{ text: "ok" }]);
  await drain(adapterFor(fake, provider, images === undefined ? {} : { images }).stream(request(messages)));
  const sent = fake.requests[0]!;
  return { body: sent.body as { messages: Record<string, unknown>[] }, raw: sent.rawBody };
}

describe("M10 images on the OpenAI Chat wire", () => {
  it("sends an attached image as an image_url part with a data URL in the request it first appears in", async () => {
    const image = savedPng();
    const { body } = await bodyFor("openai", surfaceMessagesOf([userWith(image)]));
    expect(body.messages[1]).toEqual({
      role: "user",
      content: [
        { type: "text", text: `what is in this?\n\n${imageHandleText(image)}` },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
      ],
    });
  });

  it("sends the handle, not the bytes, once an assistant message follows the image", async () => {
    const image = savedPng();
    const events = answeredImage(image);
    const { body, raw } = await bodyFor("openai", surfaceMessagesOf(events));
    expect(raw).not.toContain(PNG_BASE64);
    expect(body.messages[1]).toEqual({
      role: "user",
      content: `what is in this?\n\n${imageHandleText(image)}`,
    });
  });

  it("puts a read_image result's image in a user message after the run of tool messages", async () => {
    const image = savedPng();
    const events = readImageExchange(image);
    const { body } = await bodyFor("openai", surfaceMessagesOf(events));
    expect(body.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
    expect(body.messages[3]).toEqual({ role: "tool", tool_call_id: "c1", content: imageHandleText(image) });
    expect(body.messages[4]!.content).toEqual([
      { type: "text", text: "Image returned by read_image (call c1):" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
    ]);
  });

  it("gives a text-only model the note in place of the handle, and no bytes", async () => {
    const image = savedPng();
    const { body, raw } = await bodyFor("deepseek", surfaceMessagesOf([userWith(image)]));
    expect(raw).not.toContain(PNG_BASE64);
    expect(body.messages[1]).toEqual({
      role: "user",
      content: `what is in this?\n\n[image omitted because this model accepts text only; attachment sha256:${image.sha256}. The image "dot.png" was attached at "${image.path}"; this model cannot view images, so do not claim to have seen it.]`,
    });
  });

  it("model.images overrides the catalog both ways", async () => {
    const image = savedPng();
    const on = await bodyFor("deepseek", surfaceMessagesOf([userWith(image)]), true);
    expect(on.raw).toContain(`data:image/png;base64,${PNG_BASE64}`);
    const off = await bodyFor("openai", surfaceMessagesOf([userWith(image)]), false);
    expect(off.raw).not.toContain(PNG_BASE64);
    expect(off.raw).toContain("this model cannot view images");
  });

  it("only a person's message names images: a handle quoted by another source stays text", async () => {
    const image = savedPng();
    const { raw } = await bodyFor("openai", surfaceMessagesOf([userWith(image, "job-notice")]));
    expect(raw).not.toContain(PNG_BASE64);
  });

  it("sends a note instead of bytes when the saved copy no longer matches its sha256", async () => {
    const image = savedPng();
    chmodSync(image.path, 0o644);
    writeFileSync(image.path, Buffer.concat([PNG, Buffer.from("tampered")]));
    const { body, raw } = await bodyFor("openai", surfaceMessagesOf([userWith(image)]));
    expect(raw).not.toContain(PNG_BASE64);
    expect(body.messages[1]!.content).toEqual([
      { type: "text", text: `what is in this?\n\n${imageHandleText(image)}` },
      {
        type: "text",
        text: `[image "dot.png" could not be shown: the saved copy no longer matches its sha256. It was attached at "${image.path}".]`,
      },
    ]);
  });
});

describe("M10 images on the Anthropic Messages wire", () => {
  it("sends an attached image as an image block with a base64 source", async () => {
    const image = savedPng();
    const { body } = await bodyFor("anthropic", surfaceMessagesOf([userWith(image)]));
    expect(body.messages[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: `what is in this?\n\n${imageHandleText(image)}` },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
      ],
    });
  });

  it("sends the handle, not the bytes, once an assistant message follows the image", async () => {
    const image = savedPng();
    const events = answeredImage(image);
    const { body, raw } = await bodyFor("anthropic", surfaceMessagesOf(events));
    expect(raw).not.toContain(PNG_BASE64);
    expect(body.messages[0]).toEqual({
      role: "user",
      content: [{ type: "text", text: `what is in this?\n\n${imageHandleText(image)}` }],
    });
  });

  it("puts a read_image result's image inside its tool_result block", async () => {
    const image = savedPng();
    const events = readImageExchange(image);
    const { body } = await bodyFor("anthropic", surfaceMessagesOf(events));
    expect(body.messages[2]).toEqual({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "c1",
          content: [
            { type: "text", text: imageHandleText(image) },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
          ],
        },
      ],
    });
  });

  it("gives a text-only model the note in place of the handle", async () => {
    const image = savedPng();
    const { raw } = await bodyFor("deepseek-anthropic", surfaceMessagesOf([userWith(image)]));
    expect(raw).not.toContain(PNG_BASE64);
    expect(raw).toContain(`attachment sha256:${image.sha256}. The image \\"dot.png\\" was attached at`);
  });
});

describe("M10 image signatures", () => {
  it("knows PNG, JPEG, GIF and WebP by their first bytes and nothing else", () => {
    expect(sniffImageType(PNG)).toBe("image/png");
    expect(sniffImageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
    expect(sniffImageType(Buffer.from("GIF89a..."))).toBe("image/gif");
    expect(sniffImageType(Buffer.from("RIFF\0\0\0\0WEBPVP8 "))).toBe("image/webp");
    expect(sniffImageType(Buffer.from("RIFF\0\0\0\0WAVEfmt "))).toBeUndefined();
    expect(sniffImageType(Buffer.from("%PDF-1.7"))).toBeUndefined();
    expect(sniffImageType(Buffer.alloc(0))).toBeUndefined();
  });
});
