/**
 * M10: files and images reach the model as handles, not bytes. An attachment is saved once as a read-only
 * copy under `$BDSH_HOME/attachments/<sha256>/<name>`, and the user message carries a bracketed text that
 * says where it is and how to use it with the file tools. The bytes never enter the log or the request, so
 * a large upload costs a few dozen tokens and survives compaction as a path.
 *
 * Model experience (our wording of the seed's texts):
 * - file:        `[File "<name>" (<bytes> bytes, sha256:<digest>): read-only copy saved at "<path>". Read
 *                that path with your file tools when you need its contents; copy it somewhere writable before
 *                changing it. When you delegate work on it, put this path in the delegation prompt: only
 *                subagents in this same environment can read it.]`
 * - unreachable: `[File "<name>" (<bytes> bytes, sha256:<digest>) was uploaded, but no readable path to it
 *                exists in this environment. Say so if its contents are needed; do not claim to have read
 *                it.]`
 * - image:       `[Image "<name>" (<media type>, <bytes> bytes, sha256:<digest>) saved at "<path>"]`, the
 *                handle of log/messages.ts. The model layer sends the image itself with the request in which
 *                it first appears, and the handle alone afterwards; a text-only model reads
 *                `[image omitted because this model accepts text only; attachment sha256:<digest>. The image
 *                "<name>" was attached at "<path>"; this model cannot view images, …]` (model/images.ts).
 *                An image is what its first bytes say (PNG, JPEG, GIF, WebP), whatever its name.
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { IMAGE_MEDIA_TYPES, type ImageMediaType, type ImageRef, imageHandleText } from "../log/messages.js";
import { sniffImageType } from "../model/images.js";

export type Attachment = {
  name: string;
  bytes: number;
  sha256: string;
  mediaType: string;
  /** Absolute path of the read-only copy; undefined when this environment cannot reach one. */
  path?: string;
};

/** Saves a read-only copy (idempotent by digest) and returns its handle; an image by its magic bytes. */
export function saveAttachment(
  home: string,
  name: string,
  data: Uint8Array,
  mediaType: string = sniffImageType(data) ?? "application/octet-stream",
): Attachment {
  const sha256 = createHash("sha256").update(data).digest("hex");
  const safeName = basename(name).replace(/[^\w.@+-]+/g, "_") || "attachment";
  const dir = join(home, "attachments", sha256);
  const path = join(dir, safeName);
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, data, { mode: 0o444 });
    chmodSync(path, 0o444);
  }
  return { name: safeName, bytes: data.byteLength, sha256, mediaType, path };
}

/** Saves an image (a `read_image` result) and returns the reference its handle names. */
export function saveImage(home: string, name: string, data: Uint8Array, mediaType: ImageMediaType): ImageRef {
  const saved = saveAttachment(home, name, data, mediaType);
  return { name: saved.name, mediaType, bytes: saved.bytes, sha256: saved.sha256, path: saved.path! };
}

/** An image the model can be shown: one of the four types the wire formats take. */
export function imageTypeOf(attachment: Attachment): ImageMediaType | undefined {
  return (IMAGE_MEDIA_TYPES as readonly string[]).includes(attachment.mediaType)
    ? (attachment.mediaType as ImageMediaType)
    : undefined;
}

export function attachmentText(attachment: Attachment): string {
  const { name, bytes, sha256, path } = attachment;
  const id = `"${name}" (${bytes} bytes, sha256:${sha256})`;
  const mediaType = imageTypeOf(attachment);
  if (path !== undefined && mediaType !== undefined) {
    return imageHandleText({ name, mediaType, bytes, sha256, path });
  }
  if (path === undefined) {
    return `[File ${id} was uploaded, but no readable path to it exists in this environment. Say so if its contents are needed; do not claim to have read it.]`;
  }
  return `[File ${id}: read-only copy saved at "${path}". Read that path with your file tools when you need its contents; copy it somewhere writable before changing it. When you delegate work on it, put this path in the delegation prompt: only subagents in this same environment can read it.]`;
}

/** A user message with its attachments as handles after the text. */
export function withAttachments(text: string, attachments: readonly Attachment[]): string {
  return [text, ...attachments.map((a) => attachmentText(a))].filter((part) => part !== "").join("\n\n");
}
