/**
 * `read` (T10, C16): a UTF-8 text file, or a spilled result by its `spill://` locator, as numbered lines.
 *
 *   <path>/abs/path</path>
 *   <type>file</type>
 *   <content>
 *   1: first line
 *   (End of file - total 1 lines)
 *   </content>
 *
 * Errors: `cannot read "<p>": not found`, `…: binary file` (a NUL byte in the first 8 KiB),
 * `…: is a directory`, `offset <o> is out of range for "<p>" (<n> lines)`.
 * Parallel-safe; exempt from spill. A successful read of a file records its version (read-before-write).
 * Details: the path (or locator), the lines shown and the file's line count, from the same window the text
 * shows (the text's wrapper and footer lines are not the file's).
 */
import { readFile, stat } from "node:fs/promises";
import { type Static, Type, toolParameters } from "../schema.js";
import { parseSpillLocator } from "../spill/blob-store.js";
import type { ToolDefinition, ToolExec, ToolOutput } from "../types.js";
import { versionOf } from "./file-observations.js";
import { READ_MAX_LINES, renderWindow } from "./line-window.js";
import { hiddenReadText, isMasked, maskedRealPaths } from "./masked-paths.js";
import { recordRemoteRead, remoteFiles, remotePath } from "./remote-files.js";
import { absolutePath, realPathOf } from "./sandbox-paths.js";

export type ReadArgs = Static<typeof ReadSchema>;

const BINARY_PROBE_BYTES = 8 * 1024;

const ReadSchema = Type.Object(
  {
    file_path: Type.String({
      description: "Absolute path, path relative to the working directory, or a spill:// locator.",
    }),
    offset: Type.Optional(
      Type.Integer({ minimum: 1, description: "First line to show, 1-based. Defaults to 1." }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, description: "How many lines to show. Defaults to 2000." }),
    ),
  },
  { additionalProperties: false },
);

export const readTool: ToolDefinition<Static<typeof ReadSchema>> = {
  name: "read",
  toolset: "files",
  description:
    "Read a UTF-8 text file and return line-numbered content. Reads up to 2000 lines from `offset`; use offset and limit to page through longer files. Also reads `spill://` locators of stored full results.",
  parameters: toolParameters(ReadSchema),
  concurrency: "safe",
  readOnly: true,
  execute: (args, exec) => read(args, exec),
};

async function read(args: ReadArgs, exec: ToolExec): Promise<ToolOutput> {
  const offset = args.offset ?? 1;
  const limit = args.limit ?? READ_MAX_LINES;
  const blobId = parseSpillLocator(args.file_path);
  if (blobId !== undefined) {
    const blob = await exec.services.get("blobs")?.getBlob(blobId);
    if (!blob) throw new Error(`cannot read "${args.file_path}": not found`);
    return render(args.file_path, "spill", blob.content, offset, limit);
  }
  const remote = remoteFiles(exec);
  if (remote) {
    // The environment's files (SSH: SFTP).
    const path = remotePath(remote, args.file_path);
    const info = await remote.files.stat(path).catch(() => undefined);
    if (!info) throw new Error(`cannot read "${path}": not found`);
    if (info.kind === "directory") throw new Error(`cannot read "${path}": is a directory`);
    const content = await remote.files.readFile(path);
    if (content.subarray(0, BINARY_PROBE_BYTES).includes(0))
      throw new Error(`cannot read "${path}": binary file`);
    const output = render(path, "file", content, offset, limit);
    await recordRemoteRead(exec, remote, path);
    return output;
  }
  const path = absolutePath(exec, args.file_path);
  const real = await realPathOf(path);
  // The harness's own directory is hidden from tools as from commands, even to say what exists.
  if (isMasked(await maskedRealPaths(exec), real)) throw new Error(hiddenReadText(path));
  const info = await stat(path).catch(() => undefined);
  if (!info) throw new Error(`cannot read "${path}": not found`);
  if (info.isDirectory()) throw new Error(`cannot read "${path}": is a directory`);
  const before = await versionOf(real);
  const content = await readFile(real);
  if (content.subarray(0, BINARY_PROBE_BYTES).includes(0))
    throw new Error(`cannot read "${path}": binary file`);
  const output = render(path, "file", content, offset, limit);
  const observations = exec.services.get("fileObservations");
  if (observations && before) observations.record(real, before);
  return output;
}

function render(shown: string, type: string, content: Buffer, offset: number, limit: number): ToolOutput {
  const window = renderWindow(content, offset, limit);
  if (!window.ok)
    throw new Error(`offset ${offset} is out of range for "${shown}" (${window.totalLines} lines)`);
  return {
    text: `<path>${shown}</path>\n<type>${type}</type>\n<content>\n${window.body}\n</content>`,
    noSpill: true,
    details: {
      kind: "read",
      path: shown,
      startLine: window.firstLine,
      endLine: window.lastLine,
      totalLines: window.totalLines,
    },
  };
}
