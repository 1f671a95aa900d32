/**
 * M10: images on the wire. Both codecs ask this module three questions: which messages still show their
 * images, what bytes an image has, and what a model that cannot see it is told instead.
 *
 * Invariants:
 * - An image is sent as bytes only in the requests made before any assistant message follows the message
 *   that carries it: the request it first appears in, and that request's retries. From the next request on
 *   the history shows its handle text. This depends only on the messages, so a resumed session, or another
 *   server, builds the same request from the same log.
 * - Bytes are read from the handle's saved copy and must hash to the handle's sha256, start with a known
 *   image signature and stay within `MAX_IMAGE_BYTES` (M10: 2 MiB). Otherwise a short note goes in their
 *   place; a request is never refused for an image.
 * - A route without `images` never loads bytes: each handle text is replaced by the text-only note.
 *
 * Model experience:
 * - text-only: `[image omitted because this model accepts text only; attachment sha256:<digest>. The image
 *   "<name>" was attached at "<path>"; this model cannot view images, so do not claim to have seen it.]`
 * - unavailable: `[image "<name>" could not be shown: <reason>. It was attached at "<path>".]`
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { type ImageMediaType, type ImageRef, imageHandlesIn, type SurfaceMessage } from "../log/messages.js";

/** M10: at most 2 MiB per image. */
export const MAX_IMAGE_BYTES = 2 * 1024 * 1024;

/** The image type the first bytes announce (PNG, JPEG, GIF, WebP), or undefined. */
export function sniffImageType(data: Uint8Array): ImageMediaType | undefined {
  const starts = (offset: number, ...bytes: number[]): boolean =>
    data.length >= offset + bytes.length && bytes.every((byte, i) => data[offset + i] === byte);
  if (starts(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0, 0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0, 0x47, 0x49, 0x46, 0x38) && (starts(4, 0x37, 0x61) || starts(4, 0x39, 0x61)))
    return "image/gif";
  if (starts(0, 0x52, 0x49, 0x46, 0x46) && starts(8, 0x57, 0x45, 0x42, 0x50)) return "image/webp";
  return undefined;
}

/** Index of the first message whose images are still shown (after the last assistant message). */
export function firstLiveIndex(messages: readonly SurfaceMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "assistant") return i + 1;
  return 0;
}

export type LoadedImage =
  | { ok: true; mediaType: ImageMediaType; base64: string }
  | { ok: false; note: string };

/** The bytes behind a handle, checked, or the note to send instead. */
export function loadImage(image: ImageRef): LoadedImage {
  const unavailable = (reason: string): LoadedImage => ({
    ok: false,
    note: `[image "${image.name}" could not be shown: ${reason}. It was attached at "${image.path}".]`,
  });
  let data: Buffer;
  try {
    if (statSync(image.path).size > MAX_IMAGE_BYTES)
      return unavailable(`it is larger than ${MAX_IMAGE_BYTES} bytes`);
    data = readFileSync(image.path);
  } catch {
    return unavailable("the saved copy cannot be read in this environment");
  }
  if (createHash("sha256").update(data).digest("hex") !== image.sha256)
    return unavailable("the saved copy no longer matches its sha256");
  const mediaType = sniffImageType(data);
  if (mediaType === undefined) return unavailable("the saved copy is not a PNG, JPEG, GIF or WebP image");
  return { ok: true, mediaType, base64: data.toString("base64") };
}

export function textOnlyNote(image: ImageRef): string {
  return `[image omitted because this model accepts text only; attachment sha256:${image.sha256}. The image "${image.name}" was attached at "${image.path}"; this model cannot view images, so do not claim to have seen it.]`;
}

/** A message's text for a text-only route: every image handle replaced by the text-only note. */
export function textOnlyText(text: string): string {
  let out = text;
  for (const { image, handle } of imageHandlesIn(text)) out = out.replace(handle, textOnlyNote(image));
  return out;
}

/** A user or tool message's text as sent: on a text-only route, the text-only note in place of each handle. */
export function visibleText(
  message: { text: string; images?: readonly ImageRef[] },
  images: boolean,
): string {
  return message.images === undefined || images ? message.text : textOnlyText(message.text);
}
