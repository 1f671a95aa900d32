/**
 * Cards for the files a reply presented (T22 `present`, `details.kind === "files"`), in the terminal:
 * one line per file with its path, size and kind, and an "open" hint under it (the command that opens
 * it on this platform). Shown below the reply in `bdsh run` and `bdsh chat`.
 *
 *   ▣ out/chart.png  12.3 KB  PNG image
 *     open: xdg-open /work/project/out/chart.png
 *
 * Paths are model output: every line is sanitised and cut to `width`; nothing here throws. The words for
 * sizes and kinds come from ./file-kind.ts, which the dashboard's card (web/views/files-card.tsx) shares.
 */
import { isAbsolute, join } from "node:path";
import { fileKindOf, formatBytes, type PresentedFile } from "../../transcript/file-kind.js";
import { type Palette, sanitize, truncate } from "./style.js";

export { type PresentedFile, presentedFilesOf } from "../../transcript/file-kind.js";

/** The command that opens a file with its default application on `platform`. */
export function openCommand(path: string, platform: NodeJS.Platform): string {
  const quoted = /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
  if (platform === "darwin") return `open ${quoted}`;
  if (platform === "win32") return `start "" "${path}"`;
  return `xdg-open ${quoted}`;
}

export type FilesCardOptions = {
  /** The session's workspace (presented paths are relative to it); without it the hint names the relative path. */
  workspace?: string | undefined;
  palette: Palette;
  width: number;
  platform?: NodeJS.Platform;
};

/** The card lines for `files` (empty when there are none). */
export function filesCard(files: readonly PresentedFile[], options: FilesCardOptions): string[] {
  const p = options.palette;
  const width = Math.max(8, options.width - 1);
  const lines: string[] = [];
  for (const file of files) {
    const path = sanitize(String(file.path));
    const full = isAbsolute(path) || options.workspace === undefined ? path : join(options.workspace, path);
    lines.push(
      truncate(
        `${p.cyan("▣")} ${p.bold(path)}  ${p.dim(formatBytes(file.bytes))}  ${fileKindOf(String(file.mimeType))}`,
        width,
      ),
      truncate(
        `  ${p.dim("open:")} ${openCommand(sanitize(full), options.platform ?? process.platform)}`,
        width,
      ),
    );
  }
  return lines;
}
