/**
 * `read_image` (T22, M10): shows the model an image file from the workspace, or an attachment by its saved
 * path or handle.
 *
 * Invariants:
 * - Reads only under the workspace and `$BDSH_HOME/attachments` (real paths, so neither `..` nor a
 *   symlink leads out); under `danger-full-access` anywhere else too, except the rest of `$BDSH_HOME`
 *   (keys, the session database, other sessions' spills), which is never read.
 * - At most `MAX_IMAGE_BYTES` (M10: 2 MiB), and only PNG, JPEG, GIF or WebP by their magic bytes.
 * - The bytes are saved as a content-addressed attachment and the result is that copy's handle: the next
 *   request shows the image itself (model/images.ts), later ones the handle. The log never holds bytes.
 * - A model that cannot view images gets an error it can act on, and nothing is read.
 *
 * Model experience:
 * - success:  `[Image "<name>" (<type>, <bytes> bytes, sha256:<digest>) saved at "<copy>"]` and a line
 *   saying the image is shown with the next request only.
 * - errors:   `Error: this model cannot view images, so "<p>" was not read. …`,
 *   `Error: cannot read "<p>": not found` / `…: is a directory`,
 *   `Error: cannot read "<p>": outside the workspace and the attachments folder`,
 *   `Error: cannot read "<p>": the harness's home folder is not readable by tools`,
 *   `Error: "<p>" is <n> bytes; read_image takes images up to 2097152 bytes`,
 *   `Error: "<p>" is not a PNG, JPEG, GIF or WebP image`.
 */
import { readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { type ImageMediaType, type ImageRef, imageHandlesIn, imageHandleText } from "../../log/messages.js";
import { MAX_IMAGE_BYTES, sniffImageType } from "../../model/images.js";
import { type Static, Type, toolParameters } from "../schema.js";
import type { ToolDefinition, ToolExec, ToolOutput } from "../types.js";
import { isWithin } from "./path-within.js";
import { absolutePath, realPathOf } from "./sandbox-paths.js";

export type ReadImageArgs = Static<typeof ReadImageSchema>;

export type ReadImageOptions = {
  /** `$BDSH_HOME`: its `attachments` folder is readable, the rest never. */
  home: string;
  /** M10: the session's model takes image input (catalog, `model.images`). */
  images: boolean;
  /** Saves the bytes as a content-addressed read-only copy (context/attachments.ts). */
  save(name: string, data: Uint8Array, mediaType: ImageMediaType): ImageRef;
  /** Size cap; defaults to `MAX_IMAGE_BYTES`. */
  maxBytes?: number;
};

const ReadImageSchema = Type.Object(
  {
    file_path: Type.String({
      description:
        "Absolute path, path relative to the working directory, or an attachment's saved path or handle.",
    }),
  },
  { additionalProperties: false },
);

export function readImageTool(options: ReadImageOptions): ToolDefinition<Static<typeof ReadImageSchema>> {
  return {
    name: "read_image",
    toolset: "files",
    description:
      "Look at an image file (PNG, JPEG, GIF or WebP, up to 2 MiB): a workspace path, or the saved path or handle of an attached image. The image is shown to you with the next request only; after that the conversation keeps its handle, so call read_image again to look at it again.",
    parameters: toolParameters(ReadImageSchema),
    concurrency: "safe",
    readOnly: true,
    execute: (args, exec) => readImage(args, exec, options),
  };
}

async function readImage(
  args: ReadImageArgs,
  exec: ToolExec,
  options: ReadImageOptions,
): Promise<ToolOutput> {
  // An attachment handle names its saved copy; anything else is a path.
  const named = imageHandlesIn(args.file_path)[0]?.image.path ?? args.file_path;
  const path = absolutePath(exec, named);
  if (!options.images) {
    throw new Error(
      `this model cannot view images, so "${path}" was not read. Work from the file's name and what the user said about it, or ask the user to describe it.`,
    );
  }
  const real = await realPathOf(path);
  const denial = await readDenial(exec, options.home, real);
  if (denial) throw new Error(`cannot read "${path}": ${denial}`);
  const info = await stat(real).catch(() => undefined);
  if (!info) throw new Error(`cannot read "${path}": not found`);
  if (info.isDirectory()) throw new Error(`cannot read "${path}": is a directory`);
  const maxBytes = options.maxBytes ?? MAX_IMAGE_BYTES;
  const tooBig = (bytes: number): Error =>
    new Error(`"${path}" is ${bytes} bytes; read_image takes images up to ${maxBytes} bytes`);
  if (info.size > maxBytes) throw tooBig(info.size);
  const data = await readFile(real);
  if (data.byteLength > maxBytes) throw tooBig(data.byteLength); // grew since the stat
  const mediaType = sniffImageType(data);
  if (mediaType === undefined) throw new Error(`"${path}" is not a PNG, JPEG, GIF or WebP image`);
  const image = options.save(basename(real), data, mediaType);
  return {
    text: `${imageHandleText(image)}\nRead from "${path}". The image is shown with the next request only; later requests show this handle.`,
    noSpill: true,
    details: { kind: "image", path, mimeType: mediaType, bytes: data.byteLength },
  };
}

/** Why `real` may not be read, or undefined when it may. */
async function readDenial(exec: ToolExec, home: string, real: string): Promise<string | undefined> {
  const homeReal = await realPathOf(home);
  if (isWithin(join(homeReal, "attachments"), real)) return undefined;
  if (isWithin(homeReal, real)) return "the harness's home folder is not readable by tools";
  if (isWithin(await realPathOf(exec.workspace), real)) return undefined;
  if (exec.sandbox === "danger-full-access") return undefined;
  return "outside the workspace and the attachments folder";
}
