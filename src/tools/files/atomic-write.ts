/**
 * Atomic file replacement (T11): write a sibling temporary file, then rename it over the target, so a
 * reader never sees a half-written file. The target's mode is kept.
 *
 * `writeForTool` is what `write` and `edit` call: under workspace-write it writes through
 * contained-write.ts (per-component no-follow opens below the workspace's real path).
 * Where `/proc/self/fd` is missing it falls back to this plain check-then-write, which is open to a rename
 * race between the sandbox check and the write; the bubblewrap mount still bounds `bash` there.
 */
import { randomBytes } from "node:crypto";
import { mkdir, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { ToolExec } from "../types.js";
import { procfsAvailable, writeContained } from "./contained-write.js";

export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const directory = dirname(path);
  await mkdir(directory, { recursive: true });
  const mode = await stat(path).then(
    (info) => info.mode & 0o7777,
    () => undefined,
  );
  const temporary = join(directory, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temporary, content, mode === undefined ? {} : { mode });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Write a file for a file tool, after its sandbox check passed for the real path `real`. */
export async function writeForTool(
  exec: ToolExec,
  real: string,
  shown: string,
  content: string,
): Promise<void> {
  if (exec.sandbox === "danger-full-access" || !procfsAvailable()) {
    await writeFileAtomic(real, content);
    return;
  }
  await writeContained(await realpath(exec.workspace), real, content, shown);
}
