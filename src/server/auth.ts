/**
 * Who may call the HTTP API: the bearer token and the `Host` check.
 *
 * Invariants:
 * - Every `/v1` route needs the token, on every binding, loopback included. A command the model runs
 *   shares the machine and the network with the server, so "it came from 127.0.0.1" proves nothing: it
 *   could approve its own dangerous call (T16), answer its own question, queue messages as the human,
 *   start goal rounds or read other sessions. Only a credential the sandbox cannot read tells them apart:
 *   `BDSH_SERVER_TOKEN` (never passed to a child: tools/terminal/child-env.ts) or a token made at start and
 *   held in memory only (`generateServerToken`).
 * - The token check leaks nothing about the token, its length included: both sides are HMAC-SHA256'd with
 *   a key drawn once per checker, and the equal-length digests are compared with `timingSafeEqual`.
 * - On a loopback connection the `Host` header must name loopback (`localhost`, `127.0.0.1`, `[::1]`,
 *   with or without a port, plus any name the host app adds): a page whose name was rebound to 127.0.0.1
 *   (DNS rebinding) sends its own name and is refused. The port is not compared: a tunnel
 *   (`ssh -L 9000:localhost:8080`) forwards another port's Host, and the attacker picks the port anyway.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { isIPv4 } from "node:net";

/** A fresh token for one server process: 256 random bits, URL-safe. */
export function generateServerToken(): string {
  return randomBytes(32).toString("base64url");
}

/** A constant-time check of a presented token against `token`. */
export function tokenChecker(token: string): (given: string) => boolean {
  if (token === "") throw new Error("the server token must not be empty");
  const key = randomBytes(32);
  const digest = (value: string) => createHmac("sha256", key).update(value, "utf8").digest();
  const expected = digest(token);
  return (given) => timingSafeEqual(digest(given), expected);
}

/** The credential of an `Authorization: Bearer <token>` header (scheme case-insensitive, RFC 6750). */
export function bearerOf(header: string | undefined): string {
  const match = /^bearer +(\S+) *$/i.exec(header ?? "");
  return match?.[1] ?? "";
}

const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

/** Whether a `Host` header names one of the loopback names (or `extra`), with an optional port. */
export function hostAllowed(host: string | undefined, extra: readonly string[] = []): boolean {
  if (!host) return false;
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(host);
  if (!match) return false;
  const name = match[1]!.toLowerCase();
  return LOOPBACK_HOSTS.includes(name) || extra.some((allowed) => allowed.toLowerCase() === name);
}

/** Whether a socket's local address is loopback (127.0.0.0/8, ::1, or IPv4-mapped 127.x). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  if (address === "::1") return true;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return isIPv4(v4) && v4.startsWith("127.");
}
