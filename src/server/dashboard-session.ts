/**
 * The dashboard's sign-in (docs/interface.md "HTTP API"; SECURITY.md rows 3d, 3e). The page used to keep
 * the bearer token in `sessionStorage`, which Chromium writes to its profile on disk, where any process of
 * this user (a background job the model started) could read it and approve its own call. Now the page sends
 * the token once to `POST /v1/sign-in` and gets a session cookie the page's script cannot read:
 *
 * - `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page sends it), `Path` the
 *   plugin's prefix, `Secure` over HTTPS, and no `Max-Age`/`Expires`: a session cookie, which Chromium
 *   keeps in memory only (it writes to its cookie file only cookies with an expiry).
 * - The value is not the token: a random nonce and an HMAC of it under a key derived from the token, so
 *   every server holding the same token accepts it (servers behind one balancer) and none stores anything.
 * - A cookie is a credential the browser attaches by itself, so every state-changing request it
 *   authenticates must carry an `Origin` naming this server (`FORBIDDEN_ORIGIN` otherwise): another origin
 *   on the same site (a page on another localhost port) is what SameSite does not stop.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

export const SESSION_COOKIE = "bdsh_session";
const DERIVATION = "bdsh-dashboard-session-v1";
const MAC_BYTES = 32;

/** Issues and checks session cookie values for one server token. */
export class DashboardSessions {
  private readonly key: Buffer;

  constructor(token: string) {
    this.key = createHmac("sha256", token).update(DERIVATION, "utf8").digest();
  }

  private mac(nonce: string): Buffer {
    return createHmac("sha256", this.key).update(nonce, "utf8").digest();
  }

  issue(): string {
    const nonce = randomBytes(18).toString("base64url");
    return `${nonce}.${this.mac(nonce).toString("base64url")}`;
  }

  valid(value: string | undefined): boolean {
    const match = /^([A-Za-z0-9_-]{24})\.([A-Za-z0-9_-]{43})$/.exec(value ?? "");
    if (!match) return false;
    const given = Buffer.from(match[2]!, "base64url");
    return given.length === MAC_BYTES && timingSafeEqual(given, this.mac(match[1]!));
  }
}

/** The value of cookie `name` in a `Cookie` header, if present. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The `Set-Cookie` value that signs in (`value`) or out (`undefined`: expired at once). */
export function sessionCookie(value: string | undefined, options: { path: string; secure: boolean }): string {
  const attributes = [
    `${SESSION_COOKIE}=${value ?? ""}`,
    `Path=${options.path}`,
    "HttpOnly",
    "SameSite=Strict",
    ...(options.secure ? ["Secure"] : []),
    // A session cookie (no expiry) is never written to disk; signing out expires it.
    ...(value === undefined ? ["Max-Age=0"] : []),
  ];
  return attributes.join("; ");
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export const isStateChanging = (method: string): boolean => !SAFE_METHODS.has(method.toUpperCase());

/** Whether the `Origin` header names the server the request was sent to (its `Host`). */
export function sameOrigin(headers: IncomingHttpHeaders): boolean {
  const origin = headers.origin;
  if (!origin || origin === "null" || !headers.host) return false;
  try {
    return new URL(origin).host === headers.host.toLowerCase();
  } catch {
    return false;
  }
}
