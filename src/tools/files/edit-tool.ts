/**
 * `edit` (T11): replace literal text in an existing file, atomically.
 *
 * Matching is literal with CRLF normalised: the file, `old_string` and `new_string` are compared with `\n`
 * line ends, and a CRLF file is written back with CRLF. Texts:
 * - `old_string was not found in "<p>"`
 * - `old_string matched N times in "<p>"; provide a more specific old_string or set replace_all to true`
 * - `old_string and new_string must differ`
 * - `The file <p> has been updated successfully.` / `… All occurrences were successfully replaced.`
 * Details: the file's change (file-change.ts), from its content before and after.
 */
import { readFile } from "node:fs/promises";
import { type Static, Type, toolParameters } from "../schema.js";
import type { ToolDefinition, ToolOutput } from "../types.js";
import { writeForTool } from "./atomic-write.js";
import { fileChangeDetails } from "./file-change.js";
import { guardModification } from "./modify-guard.js";
import { guardRemoteModification, remoteFiles, remotePath, writeRemote } from "./remote-files.js";

const EditSchema = Type.Object(
  {
    file_path: Type.String({ description: "Absolute path, or relative to the working directory." }),
    old_string: Type.String({ description: "The exact text to replace." }),
    new_string: Type.String({ description: "The replacement. Use an empty string to delete the match." }),
    replace_all: Type.Optional(
      Type.Boolean({ description: "Defaults to false; when false, old_string must appear exactly once." }),
    ),
  },
  { additionalProperties: false },
);

export const editTool: ToolDefinition<Static<typeof EditSchema>> = {
  name: "edit",
  toolset: "files",
  description:
    "Edit an existing UTF-8 text file by replacing literal text. The file must have been read first, and not changed since.",
  parameters: toolParameters(EditSchema),
  concurrency: "exclusive",
  async execute(args, exec): Promise<ToolOutput> {
    if (args.old_string === args.new_string) throw new Error("old_string and new_string must differ");
    if (args.old_string === "")
      throw new Error("old_string must not be empty; use write to create or replace a whole file");
    const remote = remoteFiles(exec);
    let shown: string;
    let original: string;
    let save: (content: string) => Promise<void>;
    if (remote) {
      // The environment's files, with the same checks (remote-files.ts).
      const path = remotePath(remote, args.file_path);
      if (!(await guardRemoteModification(exec, remote, path, "edit")))
        throw new Error(`cannot edit "${path}": not found`);
      shown = path;
      original = (await remote.files.readFile(path)).toString("utf8");
      save = (content) => writeRemote(exec, remote, path, content);
    } else {
      const target = await guardModification(exec, args.file_path, "edit");
      if (!target.exists) throw new Error(`cannot edit "${target.shown}": not found`);
      shown = target.shown;
      original = await readFile(target.real, "utf8");
      save = async (content) => {
        await writeForTool(exec, target.real, target.shown, content);
        await exec.services.require("fileObservations").recordCurrent(target.real);
      };
    }
    const crlf = original.includes("\r\n");
    const content = crlf ? original.replace(/\r\n/g, "\n") : original;
    const oldText = args.old_string.replace(/\r\n/g, "\n");
    const newText = args.new_string.replace(/\r\n/g, "\n");
    const matches = content.split(oldText).length - 1;
    if (matches === 0) throw new Error(`old_string was not found in "${shown}"`);
    if (matches > 1 && !args.replace_all) {
      throw new Error(
        `old_string matched ${matches} times in "${shown}"; provide a more specific old_string or set replace_all to true`,
      );
    }
    const index = content.indexOf(oldText);
    const updated = args.replace_all
      ? content.split(oldText).join(newText)
      : content.slice(0, index) + newText + content.slice(index + oldText.length);
    await save(crlf ? updated.replace(/\n/g, "\r\n") : updated);
    const text = args.replace_all
      ? `The file ${shown} has been updated successfully. All occurrences were successfully replaced.`
      : `The file ${shown} has been updated successfully.`;
    const details = fileChangeDetails(shown, content, updated);
    return { text, details: args.replace_all ? { ...details, replacements: matches } : details };
  },
};
