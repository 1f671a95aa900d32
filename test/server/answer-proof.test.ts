/**
 * The proof an answer row carries (issue 30, src/server/answer-proof.ts): it binds the session, the
 * request and what was decided, so a copied or edited row proves nothing.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type Answer, AnswerSigner } from "../../src/server/answer-proof.js";

const signer = new AnswerSigner(randomBytes(32));
const approval: Answer = { kind: "approval", id: "req-1", decision: "deny" };
const question: Answer = { kind: "question", id: "req-2", answers: ["blue"] };

describe("answer proofs (issue 30)", () => {
  it("a genuine proof checks; none, an empty or a malformed one is unsigned or bad-proof", () => {
    for (const answer of [approval, question]) {
      expect(signer.check("s1", answer, signer.sign("s1", answer))).toBeUndefined();
      expect(signer.check("s1", answer, undefined)).toBe("unsigned");
      expect(signer.check("s1", answer, "")).toBe("unsigned");
      expect(signer.check("s1", answer, 42)).toBe("unsigned");
      expect(signer.check("s1", answer, "not-a-digest")).toBe("bad-proof");
    }
  });

  it("a proof does not carry over to another decision, answers, request, session or key", () => {
    const proof = signer.sign("s1", approval);
    expect(signer.check("s1", { ...approval, decision: "allow-once" }, proof)).toBe("bad-proof");
    expect(signer.check("s1", { ...approval, id: "req-3" }, proof)).toBe("bad-proof");
    expect(signer.check("s2", approval, proof)).toBe("bad-proof");
    expect(new AnswerSigner(randomBytes(32)).check("s1", approval, proof)).toBe("bad-proof");
    const answered = signer.sign("s1", question);
    expect(signer.check("s1", { ...question, answers: ["red"] }, answered)).toBe("bad-proof");
    expect(signer.check("s1", { ...question, answers: ["blue", "red"] }, answered)).toBe("bad-proof");
  });
});
