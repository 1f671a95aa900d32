/**
 * Proof that an approval or question answer came from a person's channel (docs/interface.md "HTTP API";
 * SECURITY.md row 3f). An answer travels as an inbox row, and a command that reaches the store can write rows too; so the
 * row carries an HMAC-SHA256, made with the approval key (config/approval-key.ts), over everything the
 * answer decides: the session, the kind, the request id and the decision or the answers. The request id is
 * a fresh UUID per request, so a proof is good for one request only and replaying an old row decides
 * nothing new.
 *
 * Invariants:
 * - Only holders of the key sign: the server for the authenticated HTTP route. Terminal and chat answers
 *   never touch the store (they are returned in-process by the `approvals` service), so they need no row.
 * - The check is constant-time over equal-length digests; a proof of any other shape is simply wrong.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { ApprovalDecision } from "../log/events.js";

export type Answer =
  | { kind: "approval"; id: string; decision: ApprovalDecision }
  | { kind: "question"; id: string; answers: string[] };

/** Why an answer row was not taken: no proof at all, or one that does not match. */
export type ProofFailure = "unsigned" | "bad-proof";

const DOMAIN = "bdsh-answer-v1";
const DIGEST_BYTES = 32;

export class AnswerSigner {
  constructor(private readonly key: Buffer) {
    if (key.length === 0) throw new Error("the approval key must not be empty");
  }

  private digest(sessionId: string, answer: Answer): Buffer {
    const decided = answer.kind === "approval" ? answer.decision : answer.answers;
    const message = JSON.stringify([DOMAIN, sessionId, answer.kind, answer.id, decided]);
    return createHmac("sha256", this.key).update(message, "utf8").digest();
  }

  /** The proof a genuine answer's row carries (base64url). */
  sign(sessionId: string, answer: Answer): string {
    return this.digest(sessionId, answer).toString("base64url");
  }

  /** `undefined` when `proof` proves `answer` in `sessionId`, else why not. */
  check(sessionId: string, answer: Answer, proof: unknown): ProofFailure | undefined {
    if (typeof proof !== "string" || proof === "") return "unsigned";
    const given = Buffer.from(proof, "base64url");
    if (given.length !== DIGEST_BYTES) return "bad-proof";
    return timingSafeEqual(given, this.digest(sessionId, answer)) ? undefined : "bad-proof";
  }
}
