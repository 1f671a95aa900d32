/**
 * A presented file (T22 `present`) in words, for every view: its kind from its media type and its size.
 * Browser-safe (no Node imports): the terminal card (src/cli/render/files-card.ts) and the dashboard's
 * (web/views/files-card.tsx) both use it.
 */
import { type ToolDetails, toolDetailsOf } from "../log/tool-details.js";

export type PresentedFile = Extract<ToolDetails, { kind: "files" }>["files"][number];

/** The presented files a `tool/result.details` carries, or undefined for any other details. */
export function presentedFilesOf(details: unknown): PresentedFile[] | undefined {
  const known = toolDetailsOf(details);
  return known?.kind === "files" && Array.isArray(known.files) ? known.files : undefined;
}

const KINDS: [RegExp, string][] = [
  [/^image\/svg/, "SVG image"],
  [/^image\/(png|jpeg|gif|webp)$/, "$1 image"],
  [/^image\//, "image"],
  [/^application\/pdf$/, "PDF document"],
  [/spreadsheet/, "spreadsheet"],
  [/presentation/, "slide deck"],
  [/wordprocessing|opendocument\.text/, "document"],
  [/^text\/csv$/, "CSV table"],
  [/^text\/markdown$/, "Markdown"],
  [/^text\/html$/, "HTML page"],
  [/^(text\/|application\/json)/, "text"],
  [/zip|x-tar|gzip/, "archive"],
  [/^audio\//, "audio"],
  [/^video\//, "video"],
];

/** A media type in words: "PNG image", "PDF document", "spreadsheet"; "file" when unknown. */
export function fileKindOf(mimeType: string): string {
  for (const [pattern, label] of KINDS) {
    const match = pattern.exec(mimeType);
    if (match) return label.replace("$1", (match[1] ?? "").toUpperCase());
  }
  return "file";
}

/** 1234 → "1.2 KB" (powers of 1024, one decimal under 10). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "?";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = unit === 0 || value >= 10 ? Math.round(value).toString() : value.toFixed(1);
  return `${shown} ${units[unit]}`;
}
