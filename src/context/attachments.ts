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
 * - image:       `[Image "<name>" (<bytes> bytes, sha256:<digest>) saved at "<path>"; read it with your file
 *                tools to view it.]`, and for a text-only model
 *                `[image omitted because this model accepts text only; attachment sha256:<digest>]`.
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

export type Attachment = {
  name: string;
  bytes: number;
  sha256: string;
  mediaType: string;
  /** Absolute path of the read-only copy; undefined when this environment cannot reach one. */
  path?: string;
};

/** Saves a read-only copy (idempotent by digest) and returns its handle. */
export function saveAttachment(
  home: string,
  name: string,
  data: Uint8Array,
  mediaType = "application/octet-stream",
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

export function isImage(attachment: Attachment): boolean {
  return attachment.mediaType.startsWith("image/");
}

export function attachmentText(
  attachment: Attachment,
  model: { textOnly: boolean } = { textOnly: false },
): string {
  const { name, bytes, sha256, path } = attachment;
  const id = `"${name}" (${bytes} bytes, sha256:${sha256})`;
  if (isImage(attachment) && model.textOnly) {
    return `[image omitted because this model accepts text only; attachment sha256:${sha256}]`;
  }
  if (path === undefined) {
    return `[File ${id} was uploaded, but no readable path to it exists in this environment. Say so if its contents are needed; do not claim to have read it.]`;
  }
  if (isImage(attachment)) {
    return `[Image ${id} saved at "${path}"; read it with your file tools to view it.]`;
  }
  return `[File ${id}: read-only copy saved at "${path}". Read that path with your file tools when you need its contents; copy it somewhere writable before changing it. When you delegate work on it, put this path in the delegation prompt: only subagents in this same environment can read it.]`;
}

/** A user message with its attachments as handles after the text. */
export function withAttachments(
  text: string,
  attachments: readonly Attachment[],
  model?: { textOnly: boolean },
): string {
  return [text, ...attachments.map((a) => attachmentText(a, model))]
    .filter((part) => part !== "")
    .join("\n\n");
}
