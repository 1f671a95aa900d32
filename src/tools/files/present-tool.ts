/**
 * `present` (T22, the SP deliverables guidance): declares files the user should open on their own (a
 * report, an image, a spreadsheet). Each one becomes a card below the reply in `bdsh run`, `bdsh chat` and
 * the dashboard, which serves it for download (src/server/file-routes.ts).
 *
 * Invariants:
 * - Only regular files inside the workspace (real paths: neither `..` nor a symlink leads out; never the
 *   harness's home folder), checked like `read` (workspace-paths.ts). One bad path refuses the whole call.
 * - The result's `details` (`kind: "files"`) carry workspace-relative paths, sizes and media types; the
 *   dashboard's download route serves only paths a session's own `files` details name.
 * - Reads nothing but metadata; parallel-safe.
 *
 * Model experience:
 * - `Presented N file(s) to the user as cards below your reply: <path> (<bytes> bytes), …`
 * - `Error: cannot present "<p>": not found` / `is a directory` / `not a regular file` /
 *   `outside the workspace "<ws>"` / `the harness's home folder is not available to tools`
 */
import { stat } from "node:fs/promises";
import { relative } from "node:path";
import { type Static, Type, toolParameters } from "../schema.js";
import type { ToolDefinition, ToolOutput } from "../types.js";
import { mediaTypeOf } from "./media-types.js";
import { workspacePath } from "./workspace-paths.js";

/** Files per call: a reply with more deliverables than this is better as one archive. */
export const MAX_PRESENTED_FILES = 20;

/** SP deliverables guidance, in our words: shown while `present` is offered. */
export const PRESENT_SECTION =
  "Show the main results in your reply itself, with a short explanation. Link files as [name](<path>) and embed an image with ![description](<path>) when it helps; keep the angle brackets, and use the file name as the label, not the full path. Call present only for deliverables the user will want to open on their own (images, documents, spreadsheets, slide decks): each one becomes a card below your reply with a preview and an open action. Do not present source files you only edited, and do not repeat as a card what the reply already shows.";

const PresentSchema = Type.Object(
  {
    files: Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      maxItems: MAX_PRESENTED_FILES,
      description: "Paths of the files, absolute or relative to the working directory.",
    }),
  },
  { additionalProperties: false },
);

export const presentTool: ToolDefinition<Static<typeof PresentSchema>> = {
  name: "present",
  toolset: "files",
  description:
    "Hand deliverable files to the user: each file (inside the workspace) is shown as a card below your reply, with its size, a preview for images and a way to open or download it.",
  parameters: toolParameters(PresentSchema),
  isAvailable: ({ services }) => services.get("terminal")?.files === undefined,
  concurrency: "safe",
  readOnly: true,
  promptSection: { order: 2_900, text: PRESENT_SECTION },
  async execute(args, exec): Promise<ToolOutput> {
    const files: { path: string; bytes: number; mimeType: string }[] = [];
    for (const named of args.files) {
      const target = await workspacePath(exec, named);
      const refuse = (why: string) => new Error(`cannot present "${target.shown}": ${why}`);
      if (!target.ok) throw refuse(target.refusal);
      const info = await stat(target.real).catch(() => undefined);
      if (!info) throw refuse("not found");
      if (info.isDirectory()) throw refuse("is a directory");
      if (!info.isFile()) throw refuse("not a regular file");
      const path = relative(target.root, target.real);
      if (!files.some((file) => file.path === path))
        files.push({ path, bytes: info.size, mimeType: mediaTypeOf(path) });
    }
    const list = files.map((file) => `${file.path} (${file.bytes} bytes)`).join(", ");
    return {
      text: `Presented ${files.length} file${files.length === 1 ? "" : "s"} to the user as cards below your reply: ${list}`,
      details: { kind: "files", files },
    };
  },
};
