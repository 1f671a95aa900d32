/**
 * Atomic file replacement (T11): write a sibling temporary file, then rename it over the target, so a
 * reader never sees a half-written file. The target's mode is kept.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

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
