/**
 * The web dashboard's static files, served by the same plugin at `/` (INTERFACE.md
 * "HTTP API": "The dashboard is served at `/`"). The page is built by `npm run build`
 * (scripts/build-dashboard.mjs, sources in web/) into `dist/dashboard/`; it speaks only to the public API.
 *
 * Invariants:
 * - The files hold no data and need no token: the page asks for the token once and trades it for an
 *   HttpOnly session cookie (`POST /v1/sign-in`, ./dashboard-session.ts) that goes with every API call.
 *   The plugin's `Host` check (DNS rebinding) still applies to them, as to every route.
 * - Only the files of the build are served, read once at start into memory (a few hundred KB), by exact
 *   name: no path from the request ever reaches the file system.
 * - The page works under the host app's prefix: `<prefix>` redirects to `<prefix>/`, and the page refers to
 *   its assets and the API by relative URLs.
 * - Assets carry a content hash in their name and are cached for a year; `index.html` is revalidated by
 *   ETag. A gzip copy is made at start and sent to clients that accept it.
 * - A strict Content-Security-Policy: scripts, styles and connections only from the page's own origin
 *   (which covers the speech WebSocket), no framing, no inline script.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { gzipSync } from "node:zlib";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { packageInfo } from "../config/package-root.js";

type Asset = { body: Buffer; gzip: Buffer | undefined; type: string; etag: string; immutable: boolean };

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "media-src 'self' blob:",
  "base-uri 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Where the build puts the page (`dist/dashboard/` in the package), when it has been built. */
export function defaultDashboardDir(): string | undefined {
  const dir = join(packageInfo().root, "dist", "dashboard");
  return existsSync(join(dir, "index.html")) ? dir : undefined;
}

/** Reads a built dashboard: `index.html` and every file under `assets/`, keyed by URL path. */
export function loadDashboard(dir: string): Map<string, Asset> {
  const files = new Map<string, Asset>();
  const add = (urlPath: string, file: string, immutable: boolean) => {
    const body = readFileSync(file);
    const type = TYPES[extname(file)] ?? "application/octet-stream";
    const compressible = /^(text\/|application\/json|image\/svg)/.test(type) && body.length > 512;
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    files.set(urlPath, {
      body,
      gzip: compressible ? gzipSync(body, { level: 9 }) : undefined,
      type,
      etag,
      immutable,
    });
  };
  add("", join(dir, "index.html"), false);
  const assets = join(dir, "assets");
  if (existsSync(assets))
    for (const name of readdirSync(assets))
      if (/^[A-Za-z0-9._-]+$/.test(name)) add(`assets/${name}`, join(assets, name), true);
  return files;
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset) {
  void reply
    .header("content-type", asset.type)
    .header("etag", asset.etag)
    .header("cache-control", asset.immutable ? "public, max-age=31536000, immutable" : "no-cache")
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("vary", "accept-encoding");
  if (asset.type.startsWith("text/html"))
    void reply.header("content-security-policy", CSP).header("x-frame-options", "DENY");
  if (request.headers["if-none-match"] === asset.etag) return reply.status(304).send();
  const gzip = asset.gzip && /\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""));
  if (gzip) void reply.header("content-encoding", "gzip");
  return reply.send(gzip ? asset.gzip : asset.body);
}

/**
 * Registers `GET /` and `GET /assets/:name` on the plugin's instance. Without a build, `/` answers 404 with
 * how to make one.
 */
export function registerDashboard(app: FastifyInstance, dir: string | undefined): void {
  const files = dir ? loadDashboard(dir) : new Map<string, Asset>();
  app.get("/", (request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    // Relative URLs in the page resolve against the directory: `<prefix>` must become `<prefix>/`.
    if (!path.endsWith("/")) return reply.redirect(`${path}/`, 308);
    const index = files.get("");
    if (!index)
      return reply.status(404).send({
        error: { code: "NOT_FOUND", message: "the dashboard is not built: run `npm run build`" },
      });
    return send(request, reply, index);
  });
  app.get<{ Params: { name: string } }>("/assets/:name", (request, reply) => {
    const asset = files.get(`assets/${request.params.name}`);
    if (!asset) return reply.status(404).send({ error: { code: "NOT_FOUND", message: "no such asset" } });
    return send(request, reply, asset);
  });
}
