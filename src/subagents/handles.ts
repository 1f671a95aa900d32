/**
 * Subagent handles (Hermes subagent lifecycle API): a serializable record that names a child and carries a
 * versioned, opaque capability — an HMAC-SHA256 over the version, the child's and the parent's ids (and the
 * correlation id, so no field can change unnoticed), keyed
 * by a secret kept in the store (`harnessKey`), so every server of the store verifies what any server issued.
 *
 * Invariants:
 * - Verification looks only at the handle and the key: a malformed, truncated, re-versioned or altered
 *   handle is refused before the store is asked anything about the child, so a refusal says nothing about
 *   which children exist.
 * - The comparison is constant-time (timingSafeEqual over the equal-length capability texts; the text, not
 *   its decoding, so no other spelling of the same digest passes).
 * - A handle never carries the key, the transcript or any state; state is read from the store each time.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const HANDLE_VERSION = 1;
export const HANDLE_KEY_NAME = "subagent-handles";

export type SubagentHandle = {
  version: number;
  childId: string;
  parentId: string;
  correlationId?: string;
  /** `v1.<base64url HMAC>`: opaque to the holder. */
  capability: string;
};

/** Session ids as the store makes them (UUID v7) or a caller chose (printable, bounded). */
const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const CAPABILITY = /^v1\.[A-Za-z0-9_-]{43}$/;

/** Over the version, both ids and the correlation id (so no field of a handle can be changed unnoticed). */
function mac(
  key: string,
  version: number,
  childId: string,
  parentId: string,
  correlationId?: string,
): Buffer {
  return createHmac("sha256", Buffer.from(key, "base64"))
    .update(JSON.stringify(["bdsh-subagent-handle", version, childId, parentId, correlationId ?? null]))
    .digest();
}

export function issueHandle(
  key: string,
  childId: string,
  parentId: string,
  correlationId?: string,
): SubagentHandle {
  const capability = `v1.${mac(key, HANDLE_VERSION, childId, parentId, correlationId).toString("base64url")}`;
  return {
    version: HANDLE_VERSION,
    childId,
    parentId,
    ...(correlationId === undefined ? {} : { correlationId }),
    capability,
  };
}

/** The handle's child and parent when it is genuine; undefined for anything else, whatever its shape. */
export function verifyHandle(
  key: string,
  handle: unknown,
): { childId: string; parentId: string } | undefined {
  if (typeof handle !== "object" || handle === null || Array.isArray(handle)) return undefined;
  const h = handle as Record<string, unknown>;
  const allowed = new Set(["version", "childId", "parentId", "correlationId", "capability"]);
  if (Object.keys(h).some((k) => !allowed.has(k))) return undefined;
  if (h.version !== HANDLE_VERSION) return undefined;
  if (typeof h.childId !== "string" || !ID.test(h.childId)) return undefined;
  if (typeof h.parentId !== "string" || !ID.test(h.parentId)) return undefined;
  if (h.correlationId !== undefined && typeof h.correlationId !== "string") return undefined;
  if (typeof h.capability !== "string" || !CAPABILITY.test(h.capability)) return undefined;
  // The text is compared, not its decoding: base64url's last character carries 2 unused bits, so 4 strings
  // decode to the same digest, and a capability with one of those bits flipped must not pass.
  const given = Buffer.from(h.capability, "ascii");
  const expected = Buffer.from(
    `v1.${mac(key, HANDLE_VERSION, h.childId, h.parentId, h.correlationId as string | undefined).toString("base64url")}`,
    "ascii",
  );
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return { childId: h.childId, parentId: h.parentId };
}
