/**
 * `write` (T11): create or replace a whole file, atomically, after the read-before-write and sandbox checks.
 * Texts: `Created file <p>` / `Updated file <p>`. Details: the file's change (file-change.ts), from the old
 * content read just before the write.
 */
import { readFile, stat } from "node:fs/promises";
import { type Static, Type, toolParameters } from "../schema.js";
import type { ToolDefinition, ToolOutput } from "../types.js";
import { writeForTool } from "./atomic-write.js";
import { fileChangeDetails } from "./file-change.js";
import { guardModification } from "./modify-guard.js";
import { guardRemoteModification, remoteFiles, remotePath, writeRemote } from "./remote-files.js";
import { absolutePath } from "./sandbox-paths.js";

const WriteSchema = Type.Object(
  {
    file_path: Type.String({ description: "Absolute path, or relative to the working directory." }),
    content: Type.String({ description: "The complete new content of the file." }),
  },
  { additionalProperties: false },
);

export const writeTool: ToolDefinition<Static<typeof WriteSchema>> = {
  name: "write",
  toolset: "files",
  description:
    "Create or fully replace a UTF-8 text file. An existing file must have been read first, and not changed since.",
  parameters: toolParameters(WriteSchema),
  concurrency: "exclusive",
  async execute(args, exec): Promise<ToolOutput> {
    const remote = remoteFiles(exec);
    if (remote) {
      // The environment's files, with the same checks (remote-files.ts).
      const path = remotePath(remote, args.file_path);
      if ((await remote.files.stat(path))?.kind === "directory")
        throw new Error(`cannot write "${path}": is a directory`);
      const exists = await guardRemoteModification(exec, remote, path, "write");
      const before = exists ? (await remote.files.readFile(path)).toString("utf8") : undefined;
      await writeRemote(exec, remote, path, args.content);
      return {
        text: `${exists ? "Updated" : "Created"} file ${path}`,
        details: fileChangeDetails(path, before, args.content),
      };
    }
    const shown = absolutePath(exec, args.file_path);
    const existing = await stat(shown).catch(() => undefined);
    if (existing?.isDirectory()) throw new Error(`cannot write "${shown}": is a directory`);
    const target = await guardModification(exec, args.file_path, "write");
    // Gone since the check: the write creates it.
    const before = target.exists ? await readFile(target.real, "utf8").catch(() => undefined) : undefined;
    await writeForTool(exec, target.real, target.shown, args.content);
    await exec.services.require("fileObservations").recordCurrent(target.real);
    return {
      text: `${target.exists ? "Updated" : "Created"} file ${target.shown}`,
      details: fileChangeDetails(target.shown, before, args.content),
    };
  },
};
