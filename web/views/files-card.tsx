/**
 * The dashboard's cards for the files a reply presented (T22 `present`, `details.kind === "files"`): the
 * path, size and kind, an image preview, and a download link. Both are served by the session's file route
 * (`GET v1/sessions/:id/files?path=`, src/server/file-routes.ts), which checks the path against what the
 * session presented and the session's workspace, so this component only builds URLs.
 *
 * Paths are model output: rendered as text nodes and URL-encoded, never as HTML.
 */
import { fileKindOf, formatBytes, type PresentedFile } from "../../src/transcript/file-kind.js";
import { apiUrl } from "../api.js";

/** The route that serves one presented file of one session. */
export function presentedFileUrl(sessionId: string, path: string): string {
  return apiUrl(`v1/sessions/${encodeURIComponent(sessionId)}/files?path=${encodeURIComponent(path)}`);
}

const PREVIEWED = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export function FilesCard({ sessionId, files }: { sessionId: string; files: readonly PresentedFile[] }) {
  return (
    <div class="files-cards" data-testid="files-cards">
      {files.map((file) => {
        const url = presentedFileUrl(sessionId, file.path);
        const name = file.path.split("/").pop() ?? file.path;
        return (
          <div key={file.path} class="card file" data-testid="file-card" data-path={file.path}>
            {PREVIEWED.has(file.mimeType) ? (
              <a href={url} target="_blank" rel="noopener noreferrer">
                <img class="file-preview" src={url} alt={file.path} loading="lazy" />
              </a>
            ) : null}
            <div class="card-head">
              <span class="file-name">{file.path}</span>
              <span class="muted">{formatBytes(file.bytes)}</span>
              <span class="tag">{fileKindOf(file.mimeType)}</span>
            </div>
            <a class="file-download" href={url} download={name}>
              {PREVIEWED.has(file.mimeType) ? "Open" : "Download"}
            </a>
          </div>
        );
      })}
    </div>
  );
}
