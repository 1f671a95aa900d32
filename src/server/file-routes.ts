/**
 * `GET /v1/sessions/:id/files?path=…`: a file the session presented (T22 `present`), for the dashboard's
 * cards: images previewed, everything else downloaded.
 *
 * Invariants (SECURITY.md, the `present` download row):
 * - Behind the token like every `/v1` route (the dashboard's cookie counts); a GET changes nothing.
 * - Only a path this session's own `present` results name (`tool/result.details`, kind `files`): a file
 *   in the same workspace that the session did not present, or another session presented, is a 404.
 * - `path` is workspace-relative: absolute paths, `..` segments, backslashes and NUL are a 400 before the
 *   file system is touched.
 * - Inside the session's workspace only, checked on what is opened: the last component is opened without
 *   following a symlink (O_NOFOLLOW), and the opened descriptor's real path (/proc/self/fd) must lie in the
 *   workspace's real path and outside `$BDSH_HOME` (unless the workspace lies inside it, as for the tools),
 *   so a directory swapped for a symlink after `present` leads nowhere (403).
 * - Shown inline only when its bytes are a PNG, JPEG, GIF or WebP image (sniffed, not the name's claim);
 *   anything else, SVG and HTML included, is `Content-Disposition: attachment` as octet-stream. Always
 *   `X-Content-Type-Options: nosniff` and a CSP that runs nothing.
 */
import { constants } from "node:fs";
import { type FileHandle, open, readlink, realpath } from "node:fs/promises";
import { basename, join, posix } from "node:path";
import type { Static } from "typebox";
import { Type } from "typebox";
import { toolDetailsOf } from "../log/tool-details.js";
import { sniffImageType } from "../model/images.js";
import type { Store } from "../store/store.js";
import { isMasked } from "../tools/files/masked-paths.js";
import { isWithin } from "../tools/files/path-within.js";
import { ApiError } from "./api-error.js";
import type { RouteTable } from "./openapi.js";
import { errorResponses, SessionId } from "./schemas.js";
import { requireSession } from "./session-routes.js";

export const PresentedFileQuery = Type.Object({
  /**
   * The workspace-relative path as the `present` result recorded it. Optional in the schema only so an
   * unknown session is a 404 like on every session route; a known session without it is a 400.
   */
  path: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
});

/** Bytes read to tell an image by its magic number. */
const SNIFF_BYTES = 16;

/** The workspace-relative paths this session's `present` calls recorded. */
export async function presentedPaths(store: Store, sessionId: string): Promise<Set<string>> {
  const paths = new Set<string>();
  for (const event of await store.read(sessionId, { types: ["tool/result"] })) {
    if (event.type !== "tool/result") continue;
    const details = toolDetailsOf(event.data.details);
    if (details?.kind === "files") for (const file of details.files) paths.add(file.path);
  }
  return paths;
}

/** `path` as a clean relative path, or the reason it is refused. */
export function relativeRequestPath(path: string): string {
  const bad = (why: string) => new ApiError(400, "BAD_PATH", `path ${JSON.stringify(path)} ${why}`);
  if (path.includes("\0") || path.includes("\\")) throw bad("has a NUL or a backslash");
  if (posix.isAbsolute(path)) throw bad("must be relative to the session's workspace");
  if (path.split("/").includes("..")) throw bad("must not contain '..'");
  return posix.normalize(path);
}

/** The open file's own real path, where the platform tells it (Linux); undefined elsewhere. */
async function descriptorPath(handle: FileHandle): Promise<string | undefined> {
  return readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
}

export function registerFileRoutes(
  routes: RouteTable,
  context: { store: Store /** `$BDSH_HOME`: never served, even from a workspace around it. */; home: string },
): void {
  const { store } = context;
  routes.add(
    "GET",
    "/v1/sessions/:id/files",
    {
      summary:
        "A file the session presented (`present`): images inline, anything else as an attachment; only inside the session's workspace",
      params: SessionId,
      querystring: PresentedFileQuery,
      response: { 200: Type.String({ format: "binary" }), ...errorResponses },
      download: true,
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SessionId>;
      const query = request.query as Static<typeof PresentedFileQuery>;
      const row = await requireSession(store, id);
      if (query.path === undefined)
        throw new ApiError(400, "BAD_PATH", "the query needs ?path=<workspace-relative path>");
      const path = relativeRequestPath(query.path);
      const workspace = row.metadata.workspace;
      const notPresented = new ApiError(
        404,
        "NOT_FOUND",
        `session ${id} presented no file ${JSON.stringify(path)}`,
      );
      if (typeof workspace !== "string" || !(await presentedPaths(store, id)).has(path)) throw notPresented;
      const root = await realpath(workspace).catch(() => undefined);
      if (root === undefined) throw new ApiError(404, "NOT_FOUND", `session ${id}'s workspace is gone`);
      const outside = new ApiError(
        403,
        "OUTSIDE_WORKSPACE",
        `${JSON.stringify(path)} leads out of the session's workspace`,
      );
      let handle: FileHandle;
      try {
        handle = await open(join(root, path), constants.O_RDONLY | constants.O_NOFOLLOW);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ELOOP") throw outside; // the file itself was replaced by a symlink
        throw new ApiError(404, "NOT_FOUND", `${JSON.stringify(path)} no longer exists`);
      }
      try {
        const opened = (await descriptorPath(handle)) ?? (await realpath(join(root, path)));
        const home = await realpath(context.home).catch(() => context.home);
        // The harness's own files stay hidden here as from the tools (masked-paths.ts), workspace or not.
        if (!isWithin(root, opened) || isMasked({ dirs: [home], workspace: root }, opened)) throw outside;
        const info = await handle.stat();
        if (!info.isFile()) throw new ApiError(404, "NOT_FOUND", `${JSON.stringify(path)} is not a file`);
        const head = Buffer.alloc(SNIFF_BYTES);
        const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
        const image = sniffImageType(head.subarray(0, bytesRead));
        const name = basename(path);
        reply
          .header("x-content-type-options", "nosniff")
          .header("content-security-policy", "default-src 'none'; sandbox")
          .header("cache-control", "private, no-store")
          .header("content-length", String(info.size))
          .header("content-type", image ?? "application/octet-stream")
          .header(
            "content-disposition",
            `${image ? "inline" : "attachment"}; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(name)}`,
          );
        return reply.send(handle.createReadStream({ start: 0 })); // closes the handle when done
      } catch (error) {
        await handle.close();
        throw error;
      }
    },
  );
}
