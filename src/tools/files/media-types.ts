/**
 * A file's media type from its name, for `present` cards and the dashboard's download route. A name says
 * what a file claims to be, not what it is: the server shows a file inline only when its bytes are an image
 * (model/images.ts sniffs them); everything else is an attachment.
 */
import { extname } from "node:path";

const BY_EXTENSION: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
  ".pdf": "application/pdf",
  ".txt": "text/plain",
  ".md": "text/markdown",
  ".csv": "text/csv",
  ".json": "application/json",
  ".html": "text/html",
  ".htm": "text/html",
  ".zip": "application/zip",
  ".tar": "application/x-tar",
  ".gz": "application/gzip",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  ".odt": "application/vnd.oasis.opendocument.text",
  ".ods": "application/vnd.oasis.opendocument.spreadsheet",
  ".odp": "application/vnd.oasis.opendocument.presentation",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".mp4": "video/mp4",
};

export const UNKNOWN_MEDIA_TYPE = "application/octet-stream";

export function mediaTypeOf(path: string): string {
  return BY_EXTENSION[extname(path).toLowerCase()] ?? UNKNOWN_MEDIA_TYPE;
}
